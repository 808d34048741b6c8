# Sourced by the scripts that start MPI jobs: OpenMPI as root, more ranks than cores (2-core CI), and the
# settings that keep OpenMPI 4.1 quiet in containers.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none PMIX_MCA_gds=hash
