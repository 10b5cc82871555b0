# --help for the scripts in scripts/, sourced first thing:
#   source "$(dirname "${BASH_SOURCE[0]}")/lib/usage.sh" "$@"
# With --help or -h among the arguments (before a "--"), prints the script's
# leading comment block without the "# " and exits 0. The block ends at the
# first line that is not a comment, so no code line slips into the usage as
# it does with a fixed line range once the comment changes length.
for arg in "$@"; do
  [[ "$arg" == "--" ]] && break
  if [[ "$arg" == "-h" || "$arg" == "--help" ]]; then
    awk 'NR == 1 { next } !/^#/ { exit } { sub(/^# ?/, ""); print }' "$0"
    exit 0
  fi
done
unset arg
