#!/bin/bash
# sbatch slurm-train.sh torchrun --nproc_per_node 8 train.py ... — the launch is wrapped: its output is shown and logged as usual; only if
# it fails is the output posted to Fixbase, and the known fix is printed at the end of the job log.
# The job's exit code is the launch's own. Needs FIXBASE_URL and FIXBASE_TOKEN in the environment
# (e.g. exported from ~/.fixbase in the user's .bashrc) and fixbase_ci.py beside this script.
#SBATCH --job-name=grpo
#SBATCH --gpus-per-node=8
here="$(dirname "$(readlink -f "$0")")"
exec python3 "$here/fixbase_ci.py" --context "job=slurm-${SLURM_JOB_ID:-local}" \
  --context "cluster=${SLURM_CLUSTER_NAME:-}" run -- "$@"
