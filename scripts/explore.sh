#!/usr/bin/env bash
# `npm run explore -- [--minutes N] [--seed S] [--length L] [--shrink-minutes M] [--cloud none|mixed|all]
# [--shared none|mixed|all] [--yaml none|mixed|all] [--platform none|mixed|all] [--kills on|off]`: runs the explorer
# (docs/exploring.md) against the real engine for N minutes (default 10) from seed S (default 1),
# L edits a sequence (default 10); failing sequences are shrunk (at most M minutes each, default
# 10) and written to .explore/found/ as case files that test/explore/cases/ can take.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
while [ "$#" -gt 0 ]; do
  case "$1" in
    --minutes) export EXPLORE_MINUTES="$2"; shift 2 ;;
    --seed) export EXPLORE_SEED="$2"; shift 2 ;;
    --length) export EXPLORE_LENGTH="$2"; shift 2 ;;
    --shrink-minutes) export EXPLORE_SHRINK_MINUTES="$2"; shift 2 ;;
    --cloud)
      case "$2" in none | mixed | all) export EXPLORE_CLOUD="$2" ;; *) echo "explore: --cloud takes none, mixed or all (got \"$2\")" >&2; exit 2 ;; esac
      shift 2 ;;
    --shared)
      case "$2" in none | mixed | all) export EXPLORE_SHARED="$2" ;; *) echo "explore: --shared takes none, mixed or all (got \"$2\")" >&2; exit 2 ;; esac
      shift 2 ;;
    --yaml)
      case "$2" in none | mixed | all) export EXPLORE_YAML="$2" ;; *) echo "explore: --yaml takes none, mixed or all (got \"$2\")" >&2; exit 2 ;; esac
      shift 2 ;;
    --platform)
      case "$2" in none | mixed | all) export EXPLORE_PLATFORM="$2" ;; *) echo "explore: --platform takes none, mixed or all (got \"$2\")" >&2; exit 2 ;; esac
      shift 2 ;;
    --kills)
      case "$2" in on | off) export EXPLORE_KILLS="$2" ;; *) echo "explore: --kills takes on or off (got \"$2\")" >&2; exit 2 ;; esac
      shift 2 ;;
    *) echo "explore: unknown option $1 (--minutes, --seed, --length, --shrink-minutes, --cloud, --shared, --yaml, --platform, --kills)" >&2; exit 2 ;;
  esac
done
for n in "${EXPLORE_MINUTES:-1}" "${EXPLORE_SEED:-1}" "${EXPLORE_LENGTH:-1}" "${EXPLORE_SHRINK_MINUTES:-1}"; do
  case "$n" in
    '' | *[!0-9]*) echo "explore: \"$n\" is not a whole number" >&2; exit 2 ;;
  esac
done
bash scripts/setup.sh
bash scripts/setup-moto.sh
# Shared and platform worlds run on the test cluster (built once, like npm test's).
if [ "${EXPLORE_SHARED:-mixed}" != none ] || [ "${EXPLORE_PLATFORM:-mixed}" != none ]; then
  bash scripts/setup-kube.sh
fi
# YAML worlds run the YAML language host (built once, like npm test's).
if [ "${EXPLORE_YAML:-mixed}" != none ]; then bash scripts/setup-languages.sh; fi
export PATH="$root/.tools/bin:$root/node_modules/.bin:$PATH"
export PULUMI_SKIP_UPDATE_CHECK=true PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION=true
exec vitest run --project explore
