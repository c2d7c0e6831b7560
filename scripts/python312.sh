# Sourced by the installers of tools that need Python >= 3.12 (Harbor, Every Eval Ever), which the
# project itself does not: `python_312 WHAT VARIABLE` prints the interpreter to use: the one $VARIABLE
# names first, then python3.12/3.13 on PATH, then pyenv's; or says how to get one and fails.
python_312() {
  local what=$1 variable=$2 candidate
  for candidate in "${!variable:-}" python3.12 python3.13 \
      "$HOME"/.pyenv/versions/3.12*/bin/python3 "$HOME"/.pyenv/versions/3.13*/bin/python3; do
    [ -n "$candidate" ] || continue
    # pyenv's shims exist on PATH even when the version is not selected: try them.
    if "$candidate" -c 'import sys; assert sys.version_info >= (3, 12)' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  echo "$what needs Python >= 3.12: install it (pyenv install 3.12) or set $variable" >&2
  return 1
}
