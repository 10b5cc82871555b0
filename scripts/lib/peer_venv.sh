# A peer framework's packages in a venv, for the scripts of bench/peers/,
# sourced:
#   source "$root/scripts/lib/peer_venv.sh"
# They read $venv (the venv's folder) and $install (0: never call pip).

# venv_has MODULE: whether MODULE can be found in the venv (not imported:
# tensorflow takes seconds to import).
venv_has() {
  [[ -x "$venv/bin/python" ]] &&
    "$venv/bin/python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$1') is None)" 2>/dev/null
}

# venv_install NAME MODULE PACKAGE... [-- PIP_ARGS...]: 0 when MODULE is in
# the venv, made if missing, after `pip install PACKAGE PIP_ARGS` for each
# PACKAGE in turn until one gives it; else prints "skip NAME: <reason>".
venv_install() {
  local name="$1" module="$2"
  shift 2
  local packages=() pip_args=()
  while (($#)) && [[ "$1" != -- ]]; do packages+=("$1"); shift; done
  (($#)) && shift && pip_args=("$@")
  if venv_has "$module"; then return 0; fi
  if [[ "$install" == 0 ]]; then
    echo "skip $name: no $module in $venv (--no_install)"
    return 1
  fi
  if [[ ! -x "$venv/bin/python" ]] && ! python3 -m venv "$venv"; then
    echo "skip $name: cannot make a venv in $venv (Debian: apt-get install python3-venv)"
    return 1
  fi
  local package log start reason=""
  for package in "${packages[@]}"; do
    log="$venv/install-$package.log" start=$SECONDS
    echo "installing $package into $venv (log: $log)"
    if "$venv/bin/python" -m pip install --disable-pip-version-check "$package" \
      "${pip_args[@]}" >"$log" 2>&1 && venv_has "$module"; then
      echo "$package installed in $((SECONDS - start)) s; the venv holds $(du -sh "$venv" | cut -f1)"
      return 0
    fi
    reason+="${reason:+; }pip install $package failed: $(grep -v '^ *$' "$log" | tail -1)"
  done
  echo "skip $name: $reason"
  return 1
}
