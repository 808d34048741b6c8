#!/usr/bin/env python3
"""DMDA conformance sweep (issue 16): every DMDA program of PETSc's snes/tutorials, ksp/ksp/tutorials and
ts/tutorials, every argument set of its /*TEST*/ block, run with -dm_mat_type aij and with -dm_mat_type sgdia
(gpukit loaded with -dll_append) on the set's nsize and on 1, 2 and 3 ranks; the printed iteration counts must be
equal and the printed norms agree to a relative tolerance.

  dmda.py scan   [options]   find the programs, parse their TEST blocks, write the run list (cached)
  dmda.py build  [options]   scan, then compile the programs (unmodified, linking only PETSc)
  dmda.py run    [options]   scan, build, run every case and classify it (the default command)

Options: --type T (the gpukit type compared with aij, default sgdia; e.g. amb, dcsr: reports sweep-<T>.txt, logs in
logs-<T>), -j N (parallel jobs, default 2), --timeout S (per run, default 120), --filter REGEX (run ids, e.g.
'^snes_ex5_'), --ranks 1,2,3 (extra rank counts; '' for the sets' nsize only), --time-limit S (start no run
after S seconds; the sets' own nsize runs go first), --max-np N (largest rank count run, default 4), --report FILE
(the classification, default <out>/sweep.txt), --out DIR (default build/conformance-dmda), --lib LIB (default
$LIB or lib/libpetscgpukit.so), --src DIR (PETSc's example sources, default: found from $PETSC_DIR).
Environment: PETSC_DIR (default /usr/lib/petsc), PETSC_ARCH, MPIEXEC (default mpiexec), DATAFILESPATH (sets that
need it are skipped without it).

A run (one argument set at one rank count) is classified as
  pass           both runs succeed, the sgdia run created a MATSGDIA from the DMDA (-info :mat says "SGDIA from
                 DMDA"), and the compared lines agree (iteration counts equal, norms to the tolerance)
  sgdia-error    aij succeeds, sgdia fails (exit status, "PETSC ERROR", or timeout): a failure
  mismatch       both succeed but the compared lines differ, and each type's second run agrees with its first: a failure
  unstable       as mismatch, but a second run with aij, or then with the type under test, differs from the first or
                 fails (the program's answer is not reproducible from run to run, e.g. PCEXOTIC in PETSc 3.18):
                 reported, not counted
  both-fail      aij fails too (the program does not allow that rank count, or the set fails anyway): not counted
  ref-fail       aij fails, sgdia does not: not counted
  n/a            both succeed but no MATSGDIA was created (the program's matrix is not created by the DMDA, or it
                 has no matrix): not counted
  skipped        not run (unmet requires:, device sets, data files, too many ranks, build failure): not counted
Compared lines are those of compare.sh (tests/conformance/compare.sh): not starting with "[", mentioning
"iteration", "norm" or "error", no "PETSC ERROR"; after the set's filter: (applied to both outputs). Integers must be
equal; floats agree to max(rtol*max|a|,|b|), atol, one unit of the last printed digit (at least 6 digits)),
rtol 1e-6 and atol 1e-12 unless tolerances.txt (beside this script) gives a case other values, with a reason.
The final line is "N passed, N failed" (failed = sgdia-error + mismatch); the exit status is 0 iff none failed.
"""
import argparse
import concurrent.futures
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, '..', '..', '..'))
FOLDERS = ['snes/tutorials', 'ksp/ksp/tutorials', 'ts/tutorials']
SCANNER_VERSION = 4  # bump when the run list format or the expansion rules change (invalidates the cache)
APPEND_KEYS = {'args', 'diff_args', 'requires', 'comments', 'env'}
DEVICE_REQS = {'cuda', 'hip', 'sycl', 'kokkos', 'kokkos_kernels', 'viennacl', 'opencl', 'raja', 'cupm'}
DEVICE_ARGS = re.compile(r'(cusparse|cuda|hipsparse|\bhip\b|kokkos|viennacl|-use_gpu_aware_mpi|-device_)', re.I)
MAX_COMBOS = 32  # at most this many {{...}} loop combinations per set (the rest are skipped, with a reason)


# ---- PETSc configuration ----------------------------------------------------------------------------------------
class Petsc:
    def __init__(self, src=None):
        self.dir = os.environ.get('PETSC_DIR') or '/usr/lib/petsc'
        self.arch = os.environ.get('PETSC_ARCH') or ''
        self.prefix = os.path.join(self.dir, self.arch) if self.arch else self.dir
        self.conf = {}
        for h in ('petscconf.h', 'petscpkg_version.h', 'petscversion.h'):
            for d in (os.path.join(self.prefix, 'include'), os.path.join(self.dir, 'include')):
                p = os.path.join(d, h)
                if os.path.exists(p):
                    for line in open(p, errors='replace'):
                        m = re.match(r'\s*#define\s+(\w+)(?:\s+(.*))?$', line)
                        if m:
                            self.conf.setdefault(m.group(1), (m.group(2) or '1').strip())
                    break
        c = self.conf
        self.version = '%s.%s.%s' % (c.get('PETSC_VERSION_MAJOR', '?'), c.get('PETSC_VERSION_MINOR', '?'),
                                     c.get('PETSC_VERSION_SUBMINOR', '?'))
        self.precision = ('single' if 'PETSC_USE_REAL_SINGLE' in c else '__float128' if 'PETSC_USE_REAL___FLOAT128' in c
                          else '__fp16' if 'PETSC_USE_REAL___FP16' in c else 'double')
        self.src = src or self.find_src()
        vars_ = os.path.join(self.prefix, 'lib', 'petsc', 'conf', 'petscvariables')
        self.vars = {}
        if os.path.exists(vars_):
            for line in open(vars_, errors='replace'):
                k, sep, v = line.partition(' = ')
                if sep:
                    self.vars[k.strip()] = v.strip()

    def find_src(self):
        # as tests/conformance/build.sh does, plus the unpacked source tree next to a PETSc built from source
        cands = [os.path.join(self.dir, 'share/petsc/examples/src'), os.path.join(self.dir, 'src'),
                 '/usr/share/petsc/3.18/share/petsc/examples/src',
                 os.path.join(os.path.dirname(self.dir), 'src', 'petsc-' + self.version, 'src')]
        for d in cands:
            if os.path.exists(os.path.join(d, 'snes/tutorials/ex19.c')):
                return d
        sys.exit('dmda: no PETSc tutorial sources found (tried %s; install libpetsc3.18-dev-examples or pass --src)'
                 % ', '.join(cands))

    def requirement_ok(self, req):
        """None if the requirement (one word of requires:) is met, else the reason it is not."""
        neg = req.startswith('!')
        r = req[1:] if neg else req
        c = self.conf
        if r in ('single', 'double', '__float128', '__fp16'):
            have = self.precision == r
        elif r in ('int32', 'int64'):
            have = ('PETSC_USE_64BIT_INDICES' in c) == (r == 'int64')
        elif r.startswith('long') and r[4:].isdigit():
            have = int(c.get('PETSC_SIZEOF_LONG', '8')) * 8 == int(r[4:])
        elif r == '64bitptr':
            have = c.get('PETSC_SIZEOF_VOID_P', '8') == '8'
        elif r == 'datafilespath':
            have = bool(os.environ.get('DATAFILESPATH'))
        elif 'defined(' in r.lower():
            have = r.split('(', 1)[1].split(')')[0] in c
        elif re.fullmatch(r'(?:PETSC_PKG_)?([A-Z0-9_]+_VERSION_)(EQ|LT|LE|GT|GE)\((\d+),(\d+),(\d+)\)', r.upper()):
            m = re.fullmatch(r'(?:PETSC_PKG_)?([A-Z0-9_]+_VERSION_)(EQ|LT|LE|GT|GE)\((\d+),(\d+),(\d+)\)', r.upper())
            keys = ['PETSC_PKG_' + m.group(1) + k for k in ('MAJOR', 'MINOR', 'SUBMINOR')]
            if all(k in c for k in keys):
                inst = tuple(int(c[k]) for k in keys)
                want = tuple(int(m.group(i)) for i in (3, 4, 5))
                have = {'EQ': inst == want, 'LT': inst < want, 'LE': inst <= want, 'GT': inst > want,
                        'GE': inst >= want}[m.group(2)]
            else:
                have = False
        elif r in ('complex', 'debug'):
            have = 'PETSC_USE_' + r.upper() in c
        else:
            have = 'PETSC_HAVE_' + r.upper() in c
        if have == neg:
            return ('requires %s' % req) if not neg else ('requires %s (PETSc has it)' % req)
        return None


# ---- the /*TEST*/ block ---------------------------------------------------------------------------------------------
def test_blocks(text):
    return re.findall(r'/\*TEST(.*?)TEST\*/', text, re.S)


def parse_block(block):
    """A /*TEST*/ block as a list of (kind, dict) with kind build/test/testset; a testset's dict has 'subtests'."""
    block = re.sub(r'\\\n', ' ', block)
    lines = []
    for raw in block.split('\n'):
        if not raw.strip() or raw.strip().startswith('#'):
            continue
        line = raw.split('#')[0].rstrip() if '#' in raw and not re.search(r'["\'][^"\']*#', raw) else raw.rstrip()
        if not line.strip() or ':' not in line:
            continue
        ind = len(line) - len(line.lstrip(' '))
        key, _, val = line.strip().partition(':')
        lines.append((ind, key.strip(), val.strip()))
    entries = []
    if not lines:
        return entries
    base = min(l[0] for l in lines)
    cur = None
    sub = None
    lvl1 = None
    for ind, key, val in lines:
        if ind == base and key in ('test', 'testset', 'build'):
            cur = {'subtests': []}
            entries.append((key, cur))
            sub, lvl1 = None, None
            continue
        if cur is None:
            continue
        if lvl1 is None:
            lvl1 = ind
        if key == 'test' and ind == lvl1:
            sub = {}
            cur['subtests'].append(sub)
            continue
        target = sub if (sub is not None and ind > lvl1) else cur
        if key in target and key in APPEND_KEYS:
            target[key] += ' ' + val
        else:
            target[key] = val
    return entries


LOOP = re.compile(r'\{\{(.*?)\}([^}]*)\}')


def expand_loops(name, args, nsize):
    """The harness' {{a b c}} loops (in args and nsize): [(name, args, nsize)] over the cartesian product."""
    loops = []  # (option name, values)
    toks = []
    for m in LOOP.finditer(args):
        before = args[:m.start()].split()
        opt = before[-1].lstrip('-') if before and before[-1].startswith('-') else 'v'
        loops.append((opt, m.group(1).split()))
        toks.append(m)
    nvals = LOOP.match(nsize.strip()).group(1).split() if LOOP.match(nsize.strip()) else [nsize.strip() or '1']
    out = []
    for combo in itertools.product(*[v for _, v in loops]) if loops else [()]:
        a = args
        for m, v in reversed(list(zip(toks, combo))):
            a = a[:m.start()] + v + a[m.end():]
        nm = name + ''.join('_%s-%s' % (re.sub(r'\W', '_', o), re.sub(r'[^\w.+-]', '_', v))
                            for (o, _), v in zip(loops, combo))
        for ns in nvals:
            out.append((nm + ('_n%s' % ns if len(nvals) > 1 else ''), a, ns))
    return out


def scan_program(petsc, folder, path):
    """The argument sets of one program: (program record, [set records])."""
    text = open(path, errors='replace').read()
    ex = os.path.splitext(os.path.basename(path))[0]
    prog = folder.split('/')[0] + '_' + ex
    build = {'requires': '', 'depends': ''}
    tests = []
    for blk in test_blocks(text):
        for kind, d in parse_block(blk):
            if kind == 'build':
                build['requires'] += ' ' + d.get('requires', '')
                build['depends'] += ' ' + d.get('depends', '')
            elif kind == 'test':
                tests.append(d)
            else:
                subs = d.pop('subtests')
                if not subs:
                    tests.append(d)
                    continue
                for k, s in enumerate(subs):
                    m = {kk: vv for kk, vv in d.items()}
                    for kk, vv in s.items():
                        if kk in APPEND_KEYS and kk in m:
                            m[kk] = m[kk] + ' ' + vv
                        elif kk == 'suffix':
                            m['suffix'] = (d.get('suffix', '') + '_' + vv).strip('_')
                        else:
                            m[kk] = vv
                    if 'suffix' not in s:  # a subtest without a suffix: the harness runs it into the parent's output
                        m['suffix'] = (d.get('suffix', '') + '_s%d' % k).strip('_')
                    tests.append(m)
        if not tests and not any(k == 'test' for k, _ in parse_block(blk)):
            pass
    bskip = None
    for r in build['requires'].split():
        bskip = bskip or petsc.requirement_ok(r)
    sets = []
    seen = set()
    firstof = {}
    for t in tests:
        base = prog + ('_' + t['suffix'] if t.get('suffix') else '')
        args = t.get('args', '')
        args = args.replace('${PETSC_DIR}', petsc.dir).replace('${wPETSC_DIR}', petsc.dir)
        if os.environ.get('DATAFILESPATH'):
            args = args.replace('${DATAFILESPATH}', os.environ['DATAFILESPATH'])
        reasons = []
        if bskip:
            reasons.append('build ' + bskip)
        for r in t.get('requires', '').split():
            why = petsc.requirement_ok(r)
            if why:
                reasons.append(why)
            if r.lstrip('!') in DEVICE_REQS and not r.startswith('!'):
                reasons.append('device set (requires %s): this sweep is CPU only' % r)
        if DEVICE_ARGS.search(args):
            reasons.append('device set (args select a GPU type): this sweep is CPU only')
        if '${' in args or '$' in args.replace('$$', ''):
            reasons.append('args need variables the sweep does not set (%s)' % re.findall(r'\$\{?\w+\}?', args)[0])
        for k in ('TODO', 'SKIP'):
            if k in t:
                reasons.append('%s: %s' % (k, t[k]))
        if 'command' in t:
            reasons.append('custom command: ' + t['command'])
        combos = expand_loops(base, args, t.get('nsize', '1'))
        for i, (nm, a, ns) in enumerate(combos):
            while nm in seen:
                nm += '_x'
            seen.add(nm)
            r = list(reasons)
            if i >= MAX_COMBOS:
                r.append('loop combination %d of %d: the sweep runs the first %d' % (i + 1, len(combos), MAX_COMBOS))
            try:
                nsz = int(ns)
            except ValueError:
                nsz, r = 1, r + ['nsize %r not understood' % ns]
            try:
                argv = shlex.split(a)
            except ValueError:
                argv, r = [], r + ['args not understood by a shell parser']
            # the sweep sets -dm_mat_type itself (last, so it wins): a set's own -dm_mat_type is dropped, and sets that
            # then have the same arguments (loops over -dm_mat_type {{aij baij ...}}) are run once
            for k in range(len(argv) - 2, -1, -1):
                if argv[k] == '-dm_mat_type':
                    del argv[k:k + 2]
            dkey = (tuple(argv), nsz, t.get('filter', ''), t.get('env', ''))
            if dkey in firstof and not r:
                r.append('same arguments as %s once -dm_mat_type is replaced' % firstof[dkey])
            elif not r:
                firstof[dkey] = nm
            sets.append({'id': nm, 'prog': prog, 'nsize': nsz, 'args': argv, 'filter': t.get('filter', ''),
                         'env': t.get('env', ''), 'localrunfiles': t.get('localrunfiles', '').split(),
                         'skip': '; '.join(r)})
    return {'prog': prog, 'src': path, 'dir': os.path.dirname(path), 'depends': build['depends'].split(),
            'skip': bskip}, sets


def scan(petsc, out):
    cache = os.path.join(out, 'runlist.json')
    srcs = []
    for f in FOLDERS:
        d = os.path.join(petsc.src, f)
        for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            p = os.path.join(d, name)
            if name.endswith('.c') and re.search(r'\bDMDACreate\w*\s*\(', open(p, errors='replace').read()):
                srcs.append((f, p))
    newest = max([os.path.getmtime(p) for _, p in srcs] + [os.path.getmtime(__file__)])
    key = {'version': SCANNER_VERSION, 'src': petsc.src, 'prefix': petsc.prefix,
           'datafiles': os.environ.get('DATAFILESPATH', '')}
    if os.path.exists(cache) and os.path.getmtime(cache) > newest:
        data = json.load(open(cache))
        if data.get('key') == key:
            return data
    progs, sets = [], []
    for f, p in srcs:
        pr, ss = scan_program(petsc, f, p)
        if not ss:
            pr['skip'] = pr['skip'] or 'no test: in its TEST block'
        progs.append(pr)
        sets += ss
    data = {'key': key, 'petsc': petsc.version, 'programs': progs, 'sets': sets}
    os.makedirs(out, exist_ok=True)
    with open(cache + '.tmp', 'w') as fh:
        json.dump(data, fh, indent=1)
    os.replace(cache + '.tmp', cache)
    return data


# ---- building ---------------------------------------------------------------------------------------------------------
def build(petsc, data, out, jobs):
    """Compile every program that has a set to run; returns {prog: None or the reason it did not build}."""
    bindir = os.path.join(out, 'bin')
    os.makedirs(bindir, exist_ok=True)
    v = petsc.vars
    cc, inc, libs = v.get('PCC', 'mpicc'), v.get('PETSC_CC_INCLUDES', ''), v.get('PETSC_WITH_EXTERNAL_LIB', '')
    libdir = os.path.join(petsc.prefix, 'lib')
    need = {s['prog'] for s in data['sets'] if not s['skip']}
    status = {}

    def one(p):
        exe = os.path.join(bindir, p['prog'])
        srcs = [p['src']] + [os.path.join(p['dir'], d) for d in p['depends']]
        if os.path.exists(exe) and all(os.path.getmtime(exe) > os.path.getmtime(s) for s in srcs):
            return p['prog'], None
        tmp = '%s.tmp.%d' % (exe, os.getpid())
        # C++ dependencies (e.g. snes ex55's ex55k.kokkos.cxx, empty without Kokkos) go through $CXX, then link with it
        cxx = [s for s in srcs if not s.endswith('.c')]
        objs = []
        for k, s in enumerate(cxx):
            obj = '%s.dep%d.o' % (tmp, k)
            r = subprocess.run('%s -O2 -w %s -c %s -o %s' % (v.get('CXX', 'mpicxx'), inc, shlex.quote(s), shlex.quote(obj)),
                               shell=True, capture_output=True, text=True)
            if r.returncode != 0:
                msg = [l for l in (r.stderr + r.stdout).splitlines() if 'error' in l] or ['exit %d' % r.returncode]
                return p['prog'], 'build of %s failed: %s' % (os.path.basename(s), msg[0])
            objs.append(obj)
        link = v.get('CXX_LINKER', 'mpicxx') if cxx else cc
        csrc = [s for s in srcs if s.endswith('.c')]
        cmd = '%s -O2 -w %s %s %s -o %s -Wl,-rpath,%s %s -lm' % (link, inc, ' '.join('-x c ' + shlex.quote(s) for s in csrc) + (' -x none' if cxx else ''),
                                                             ' '.join(objs), shlex.quote(tmp), libdir, libs)
        r = subprocess.run(cmd, shell=True, capture_output=True, text=True)
        for ob in objs:
            os.remove(ob)
        if r.returncode != 0:
            msg = [l for l in (r.stderr + r.stdout).splitlines() if 'error' in l] or (r.stderr + r.stdout).splitlines()
            return p['prog'], 'build failed: ' + (msg[0] if msg else 'exit %d' % r.returncode)
        os.replace(tmp, exe)
        return p['prog'], None

    todo = [p for p in data['programs'] if p['prog'] in need and not p['skip']]
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as ex:
        for prog, why in ex.map(one, todo):
            status[prog] = why
            if why:
                print('dmda: %s: %s' % (prog, why), file=sys.stderr)
    return status


# ---- comparing -----------------------------------------------------------------------------------------------------
INT = re.compile(r'^[-+]?[0-9]+$')
FLT = re.compile(r'^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$')
NAN = re.compile(r'^[-+]?nan$', re.I)


def selected(text):
    return [l for l in text.splitlines() if not l.startswith('[') and re.search(r'iteration|norm|error', l, re.I)
            and 'PETSC ERROR' not in l]


def tokens(lines):
    out = []
    for n, l in enumerate(lines):
        for w in re.split(r'[ \t,;=()]+', l):
            if not w:
                continue
            k = 'I' if INT.match(w) else 'F' if (FLT.match(w) or NAN.match(w)) else 'T'
            out.append((k, w, n))
    return out


def ulp(s):
    m, e = s, 0
    mm = re.search(r'[eE]', m)
    if mm:
        e, m = int(m[mm.start() + 1:]), m[:mm.start()]
    p = m.find('.')
    f = len(m) - p - 1 if p >= 0 else 0
    g = re.sub(r'[^0-9]', '', m).lstrip('0')
    if not g:
        return 0.0
    if len(g) < 6:
        f += 6 - len(g)
    return 10.0 ** (e - f)


def compare(ref, new, rtol, atol):
    """None when the outputs agree, else a description of the first difference; plus the number of numbers."""
    a, b = selected(ref), selected(new)
    ta, tb = tokens(a), tokens(b)
    nnum = sum(1 for t in ta if t[0] != 'T')
    for i in range(max(len(ta), len(tb))):
        x = ta[i] if i < len(ta) else ('E', '(end-of-output)', len(a))
        y = tb[i] if i < len(tb) else ('E', '(end-of-output)', len(b))
        where = '\n    aij:   %s\n    sgdia: %s' % (a[x[2]] if x[2] < len(a) else '(end)', b[y[2]] if y[2] < len(b) else '(end)')
        if x[0] != y[0] or (x[0] != 'F' and x[1] != y[1]):
            return '"%s" vs "%s"%s' % (x[1], y[1], where), nnum
        if x[0] != 'F':
            continue
        if NAN.match(x[1]) or NAN.match(y[1]):
            return 'NaN (%s vs %s)%s' % (x[1], y[1], where), nnum
        va, vb = float(x[1]), float(y[1])
        tol = max(rtol * max(abs(va), abs(vb)), atol, ulp(x[1]), ulp(y[1]))
        if abs(va - vb) > tol * (1 + 1e-9):  # (one unit in the last digit is allowed: no round-off in the test)
            return '%s vs %s (difference %.3g, tolerance %.3g)%s' % (x[1], y[1], abs(va - vb), tol, where), nnum
    return None, nnum


def apply_filter(text, flt):
    if not flt:
        return text
    try:
        r = subprocess.run(['bash', '-c', flt], input=text, capture_output=True, text=True, timeout=30)
        return r.stdout
    except Exception:
        return text


def first_error(text, rc, timed_out, tmo):
    if timed_out:
        return 'timed out after %ds' % tmo
    errs = [re.sub(r'^\[\d+\]', '', l).strip() for l in text.splitlines() if 'PETSC ERROR' in l]
    errs = [e for e in errs if not re.search(r'PETSC ERROR: -{5,}', e) and 'See https' not in e and 'Error Message' not in e]
    if errs:
        msg = errs[0]
        if len(errs) > 1 and not re.search(r'PETSC ERROR: (Petsc|\S+ on a |Configure|#\d|See |Option left|WARNING!)', errs[1]):
            msg += ' | ' + errs[1].replace('PETSC ERROR:', '').strip()
        return msg
    tail = [l for l in text.splitlines() if l.strip()][-1:] or ['(no output)']
    return 'exit status %d: %s' % (rc, tail[0][:200])


# ---- running ---------------------------------------------------------------------------------------------------------
def load_tolerances():
    tols = []
    p = os.path.join(HERE, 'tolerances.txt')
    if os.path.exists(p):
        for line in open(p):
            line = line.split('#')[0].strip()
            if line:
                pat, rt, at = line.split()[:3]
                tols.append((re.compile(pat), float(rt), float(at)))
    return tols


def run_case(case, cfg):
    np_ = case['np']
    res = {'id': case['id'], 'np': np_}
    outs = {}
    for kind in ('aij', 'sgdia'):
        outs[kind] = run_kind(case, cfg, kind, outs)
        if kind == 'aij' and outs[kind]['failed'] and np_ != case['nsize']:
            # a rank count the set does not declare, on which the program fails with aij: it does not allow it
            return dict(res, t=round(outs[kind]['dt'], 1), **{'class': 'skipped',
                        'why': 'aij fails on %d ranks (not the set\'s nsize %d)' % (np_, case['nsize']),
                        'detail': outs[kind]['err']})
    a, s = outs['aij'], outs['sgdia']
    res['t'] = round(a['dt'] + s['dt'], 1)
    if a['failed'] and a['to']:
        res['class'], res['why'] = 'skipped', 'aij timed out after %ds' % cfg['timeout']
    elif a['failed']:
        res['class'] = 'both-fail' if s['failed'] else 'ref-fail'
        res['why'] = a['err']
    elif s['failed']:
        res['class'] = 'sgdia-error'
        res['why'] = s['err'] + (' (aij took %.1fs)' % a['dt'] if s['to'] else '')
    elif cfg['marker'] not in s['info']:
        res['class'], res['why'] = 'n/a', 'no "%s" in -info :mat (no %s matrix from the DMDA)' % (cfg['marker'], cfg['type'])
    else:
        rtol, atol = 1e-6, 1e-12
        for pat, rt, at in cfg['tols']:
            if pat.search(case['id']):
                rtol, atol = rt, at
                break
        diff, nnum = compare(apply_filter(a['text'], case['filter']), apply_filter(s['text'], case['filter']), rtol, atol)
        if diff and cfg['type'] != 'sgdia':  # compare() names the second output sgdia
            diff = diff.replace('\n    sgdia: ', '\n    %s: ' % cfg['type'])
        res['nnum'] = nnum
        if diff:
            # does each type reproduce its own answer? A program whose runs differ from each other with the same type
            # (e.g. PCEXOTIC in PETSc 3.18, with aij too) cannot be compared; it is reported, not counted
            fa = apply_filter(a['text'], case['filter'])
            b = run_kind(case, cfg, 'aij-again', outs)
            res['t'] = round(res['t'] + b['dt'], 1)
            same = None if b['failed'] else compare(fa, apply_filter(b['text'], case['filter']), rtol, atol)[0]
            if not b['failed'] and not same:  # aij reproduces itself: does the type under test?
                c = run_kind(case, cfg, 'again', outs)
                res['t'] = round(res['t'] + c['dt'], 1)
                fs = apply_filter(s['text'], case['filter'])
                sself = None if c['failed'] else compare(fs, apply_filter(c['text'], case['filter']), rtol, atol)[0]
            if b['failed']:
                res['class'], res['why'] = 'unstable', 'the second aij run failed: %s (aij vs %s: %s)' % (b['err'], cfg['type'], diff)
            elif same:
                res['class'], res['why'] = 'unstable', 'two aij runs differ: %s (aij vs %s: %s)' % (same, cfg['type'], diff)
            elif c['failed']:
                res['class'], res['why'] = 'unstable', 'the second %s run failed: %s (aij vs %s: %s)' % (cfg['type'], c['err'], cfg['type'], diff)
            elif sself:
                res['class'], res['why'] = 'unstable', 'two %s runs differ: %s (aij vs %s: %s)' % (cfg['type'], sself, cfg['type'], diff)
            else:
                res['class'], res['why'] = 'mismatch', diff
        else:
            res['class'] = 'pass'
            res['why'] = '%d numbers compared' % nnum if nnum else 'no iteration count or norm printed: outputs ran, nothing compared'
    return res


def run_kind(case, cfg, kind, outs):
    """one run of a case with -dm_mat_type aij or sgdia ('aij-again': aij once more); its log and classification"""
    prog, argv, np_ = case['prog'], case['args'], case['np']
    exe = os.path.join(cfg['out'], 'bin', prog)
    mt = cfg['type'] if kind in ('sgdia', 'again') else 'aij'  # 'sgdia': the role of the type under test (--type); 'again': it once more
    wd = tempfile.mkdtemp(prefix='dmda-%s-' % mt, dir=cfg['tmp'])
    for f in case['localrunfiles']:
        src = os.path.join(case['dir'], f)
        if os.path.exists(src):
            os.symlink(src, os.path.join(wd, os.path.basename(f)))
    extra = ['-dll_append', cfg['lib'], '-dm_mat_type', mt]
    if kind in ('sgdia', 'again'):
        extra += ['-info', os.path.join(wd, 'gkinfo') + ':mat']
    env = dict(os.environ)
    for kv in shlex.split(case['env']):
        k, _, v = kv.partition('=')
        env[k] = v
    cmd = [cfg['mpiexec'], '-n', str(np_), exe] + [a for a in argv if a not in ('-log_view',)] + extra
    t0 = time.time()
    to = False
    # the sgdia run may take 10 times as long as the aij run (at least 30 s, at most --timeout)
    tmo = cfg['timeout'] if kind != 'sgdia' else min(cfg['timeout'], max(30, 10 * outs['aij']['dt']))
    try:
        p = subprocess.run(cmd, cwd=wd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=tmo, errors='replace')
        text, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired as e:
        text = e.stdout if isinstance(e.stdout, str) else (e.stdout or b'').decode('utf8', 'replace')
        rc, to = 124, True
    dt = time.time() - t0
    info = ''
    if kind == 'sgdia':
        for f in os.listdir(wd):
            if f.startswith('gkinfo'):
                info += open(os.path.join(wd, f), errors='replace').read()
    shutil.rmtree(wd, ignore_errors=True)
    with open(os.path.join(cfg['logs'], '%s_np%d.%s.out' % (case['id'], np_, mt if kind == 'sgdia' else mt + '-again' if kind == 'again' else kind)), 'w') as fh:
        fh.write('$ ' + ' '.join(shlex.quote(c) for c in cmd) + '\n' + text)
    failed = to or rc != 0 or 'PETSC ERROR' in text
    return {'text': text, 'rc': rc, 'to': to, 'dt': dt, 'failed': failed, 'info': info,
            'err': first_error(text, rc, to, tmo) if failed else ''}


CLASSES = ['pass', 'sgdia-error', 'mismatch', 'unstable', 'both-fail', 'ref-fail', 'n/a', 'skipped']


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('command', nargs='?', default='run', choices=['scan', 'build', 'run'])
    ap.add_argument('-j', type=int, default=2)
    ap.add_argument('--timeout', type=int, default=120)
    ap.add_argument('--filter', default='.')
    ap.add_argument('--ranks', default='1,2,3')
    ap.add_argument('--max-np', type=int, default=4)
    ap.add_argument('--report')
    ap.add_argument('--time-limit', type=int, default=0)
    ap.add_argument('--out', default=os.path.join(TOP, 'build', 'conformance-dmda'))
    ap.add_argument('--lib', default=os.environ.get('LIB') or os.path.join(TOP, 'lib', 'libpetscgpukit.so'))
    ap.add_argument('--src')
    ap.add_argument('--type', default='sgdia')
    o = ap.parse_args()
    petsc = Petsc(o.src)
    out = os.path.abspath(o.out)
    t0 = time.time()
    data = scan(petsc, out)
    nprog = len(data['programs'])
    print('dmda: PETSc %s (%s), sources %s: %d DMDA programs, %d argument sets (%d runnable)' %
          (petsc.version, petsc.prefix, petsc.src, nprog, len(data['sets']), sum(1 for s in data['sets'] if not s['skip'])))
    if o.command == 'scan':
        for s in data['sets']:
            print('%-50s np %-2d %s%s' % (s['id'], s['nsize'], ' '.join(s['args']), ('   [skip: %s]' % s['skip']) if s['skip'] else ''))
        return 0
    bstat = build(petsc, data, out, o.j)
    print('dmda: built %d programs (%d failed) in %ds' % (sum(1 for v in bstat.values() if not v),
                                                         sum(1 for v in bstat.values() if v), time.time() - t0))
    if o.command == 'build':
        return 1 if any(bstat.values()) else 0
    if not os.path.exists(o.lib):
        sys.exit('dmda: no plugin library %s (build it, or pass --lib / $LIB)' % o.lib)
    progs = {p['prog']: p for p in data['programs']}
    extra = [int(x) for x in o.ranks.split(',') if x]
    flt = re.compile(o.filter)
    cases, results = [], []
    for s in data['sets']:
        if not flt.search(s['id']):
            continue
        for np_ in sorted(set([s['nsize']] + extra)):
            base = {'id': s['id'], 'np': np_}
            why = s['skip'] or (bstat.get(s['prog']) if s['prog'] in bstat else 'not built')
            if not why and np_ > o.max_np:
                why = 'nsize %d > --max-np %d' % (np_, o.max_np)
            if why:
                results.append(dict(base, **{'class': 'skipped', 'why': why, 't': 0}))
            else:
                cases.append(dict(s, np=np_, dir=progs[s['prog']]['dir']))
    logs = os.path.join(out, 'logs' if o.type == 'sgdia' else 'logs-' + o.type)
    shutil.rmtree(logs, ignore_errors=True)
    os.makedirs(logs)
    tmp = tempfile.mkdtemp(prefix='run-', dir=out)
    # a snapshot of the library: a rebuild during the sweep does not mix two versions in one sweep (same file name:
    # PETSc derives the name of the registration function from it)
    os.makedirs(os.path.join(out, 'lib'), exist_ok=True)
    lib = os.path.join(out, 'lib', os.path.basename(o.lib))
    shutil.copy2(o.lib, lib + '.tmp')
    os.replace(lib + '.tmp', lib)
    cfg = {'out': out, 'lib': lib, 'timeout': o.timeout, 'mpiexec': os.environ.get('MPIEXEC', 'mpiexec'),
           'logs': logs, 'tmp': tmp, 'tols': load_tolerances(), 'type': o.type,
           # what -info :mat says when the DMDA made a matrix of the type (MATSGDIA: its own line; the others: the
           # constructors' "gpukit: created a <type> matrix")
           'marker': 'SGDIA from DMDA' if o.type == 'sgdia' else 'gpukit: created a'}
    os.environ['XDG_CACHE_HOME'] = os.path.join(out, 'cache')  # the tuner's cache: the sweep's own, never the user's
    shutil.rmtree(os.environ['XDG_CACHE_HOME'], ignore_errors=True)
    print('dmda: %d runs of %d sets (each aij + %s), -j %d, timeout %ds, library %s' %
          (len(cases), len({c['id'] for c in cases}), o.type, o.j, o.timeout, cfg['lib']))
    lock = threading.Lock()
    done = [0]
    # the sets' own rank counts first, then the extra ones: a sweep cut short by --time-limit has run every set once
    cases.sort(key=lambda c: (c['np'] != c['nsize'], c['np']))
    t1 = time.time()
    partial = results[:]

    def go(c):
        if o.time_limit and time.time() - t0 > o.time_limit:
            return {'id': c['id'], 'np': c['np'], 'class': 'skipped', 't': 0,
                    'why': 'not started: the sweep reached --time-limit %ds' % o.time_limit}
        r = run_case(c, cfg)
        with lock:
            done[0] += 1
            partial.append(r)
            if r['class'] not in ('pass', 'skipped', 'n/a', 'both-fail', 'ref-fail'):
                print('  [%d/%d] %-12s %s np %d: %s' % (done[0], len(cases), r['class'], r['id'], r['np'], r['why'].split('\n')[0][:160]), flush=True)
            if done[0] % 50 == 0:  # the classification so far, for whoever reads the report during a long sweep
                report(o, petsc, data, list(partial), bstat, time.time() - t0, time.time() - t1, out, quiet=True,
                       progress='%d of %d runs done' % (done[0], len(cases)))
        return r
    with concurrent.futures.ThreadPoolExecutor(max(1, o.j)) as ex:
        results += list(ex.map(go, cases))
    shutil.rmtree(tmp, ignore_errors=True)
    wall = time.time() - t0
    report(o, petsc, data, results, bstat, wall, time.time() - t1, out)
    nfail = sum(1 for r in results if r['class'] in ('sgdia-error', 'mismatch'))
    return 1 if nfail else 0


def cfg_logs(o):
    return 'logs' if o.type == 'sgdia' else 'logs-' + o.type


def report(o, petsc, data, results, bstat, wall, runwall, out, quiet=False, progress=None):
    cnt = {c: sum(1 for r in results if r['class'] == c) for c in CLASSES}
    sel = {r['id'] for r in results}
    progs_run = {s['prog'] for s in data['sets'] if s['id'] in sel}
    L = []
    L.append('DMDA conformance sweep (tests/conformance/dmda/dmda.py), -dm_mat_type aij against %s, %s' % (o.type, time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())))
    if progress:
        L.append('*** IN PROGRESS: %s; this is the classification so far ***' % progress)
    L.append('PETSc %s at %s; library %s (modified %s); filter %r; ranks: nsize + %s (max %d); timeout %ds; -j %d' %
             (petsc.version, petsc.prefix, o.lib, time.strftime('%H:%M:%S UTC', time.gmtime(os.path.getmtime(o.lib))), o.filter, o.ranks, o.max_np, o.timeout, o.j))
    L.append('%d DMDA programs (%d with sets selected), %d argument sets selected, %d runs; %d s in all (%d s running)' %
             (len(data['programs']), len(progs_run), len(sel), len(results), wall, runwall))
    L.append('')
    L.append('%-12s %6s' % ('class', 'runs'))
    for c in CLASSES:
        L.append('%-12s %6d' % (c.replace('sgdia', o.type), cnt[c]))
    nonum = sum(1 for r in results if r['class'] == 'pass' and not r.get('nnum'))
    if nonum:
        L.append('(%d of the passes printed no iteration count or norm: they ran and made a %s matrix, nothing compared)' % (nonum, o.type))
    L.append('')
    fails = [r for r in results if r['class'] in ('sgdia-error', 'mismatch')]
    groups = {}
    for r in fails:
        key = r['class'].replace('sgdia', o.type) + ': ' + (re.sub(r'\d+(\.\d+)?(e[-+]?\d+)?', 'N', r['why'].split('\n')[0]) if r['class'] == 'sgdia-error' else 'compared lines differ')
        groups.setdefault(key, []).append(r)
    if fails:
        L.append('== failures grouped by message (%d runs) ==' % len(fails))
        for k, rs in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            L.append('%3d x %s' % (len(rs), k))
            for r in rs:
                L.append('      %s np %d: %s' % (r['id'], r['np'], r['why'].replace('\n', '\n        ')))
        L.append('')
    for c in ('unstable', 'both-fail', 'ref-fail', 'n/a'):
        rs = [r for r in results if r['class'] == c]
        if rs:
            L.append('== %s (%d runs; not counted) ==' % (c, len(rs)))
            for r in rs:
                L.append('      %s np %d: %s' % (r['id'], r['np'], r['why'].split('\n')[0][:200]))
            L.append('')
    sk = {}
    for r in results:
        if r['class'] == 'skipped':
            sk.setdefault(r['why'], []).append('%s/np%d' % (r['id'], r['np']))
    if sk:
        L.append('== skipped (%d runs), by reason ==' % cnt['skipped'])
        for k, v in sorted(sk.items(), key=lambda kv: -len(kv[1])):
            L.append('%4d x %s: %s%s' % (len(v), k, ' '.join(v[:6]), ' ...' if len(v) > 6 else ''))
        L.append('')
    bad = {k: v for k, v in bstat.items() if v}
    if bad:
        L.append('== programs that did not build ==')
        for k, v in bad.items():
            L.append('      %s: %s' % (k, v))
        L.append('')
    slow = sorted([r for r in results if r.get('t')], key=lambda r: -r['t'])[:5]
    L.append('slowest runs (aij + %s): ' % o.type + ', '.join('%s np %d %.0fs' % (r['id'], r['np'], r['t']) for r in slow))
    L.append('logs: %s/<id>_np<N>.{aij,%s,aij-again,%s-again}.out' % (os.path.join(out, os.path.basename(cfg_logs(o))), o.type, o.type))
    L.append('%d passed, %d failed' % (cnt['pass'], len(fails)))
    text = '\n'.join(L) + '\n'
    with open(os.path.join(out, 'results.json' if o.type == 'sgdia' else 'results-%s.json' % o.type), 'w') as fh:
        json.dump(results, fh, indent=0)
    rep = o.report or os.path.join(out, 'sweep.txt' if o.type == 'sgdia' else 'sweep-%s.txt' % o.type)
    with open(rep + '.tmp', 'w') as fh:
        fh.write(text)
    os.replace(rep + '.tmp', rep)
    if quiet:
        return
    # the console: the summary, the failures, the final line
    print('\n'.join(l for l in L if not l.startswith('      ') or any(l.startswith('      ' + r['id']) for r in fails)))
    print('(full classification in %s)' % rep)


if __name__ == '__main__':
    sys.exit(main())
