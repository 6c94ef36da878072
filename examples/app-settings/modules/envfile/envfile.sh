# envfile: one KEY=value line of an env file. States: present {path, key, value}, absent {path, key}.
# Run by the soul with /bin/sh (module.yml `runtime: sh`), in /. The params need no JSON parser: each
# scalar one is in KEEPER_PARAM_<NAME>, the state in KEEPER_STATE, a dry run is KEEPER_DRY_RUN=1
# (docs/state-modules.md). The answer is one JSON object on stdout; a non-zero exit fails the step,
# and what the program wrote (stdout, then stderr) is the step's output.
set -eu

path=$KEEPER_PARAM_PATH
key=$KEEPER_PARAM_KEY

# A JSON string of $1: backslashes and double quotes escaped (the contract allows no newline).
json() {
  printf '"%s"' "$(printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')"
}

answer() { # changed output diff
  printf '{"changed": %s, "output": %s, "diff": %s}\n' "$1" "$(json "$2")" "$3"
}

# The current line (KEY=... at the start of a line), if any; the key is [A-Za-z_][A-Za-z0-9_]*.
current=""
found=false
if [ -f "$path" ] && grep -q "^$key=" "$path"; then
  current=$(grep "^$key=" "$path" | tail -n 1)
  found=true
fi
was=null
if $found; then was=$(json "${current#*=}"); fi

# The file without the key's lines, then the new line (if any), written beside and renamed over it,
# keeping the file's mode (0644 for a new file).
rewrite() { # new line, or empty to drop the key
  tmp="$path.envfile.$$"
  if [ -f "$path" ]; then
    grep -v "^$key=" "$path" >"$tmp" || true
    chmod "$(stat -c %a "$path")" "$tmp"
  else
    : >"$tmp"
    chmod 0644 "$tmp"
  fi
  if [ -n "$1" ]; then printf '%s\n' "$1" >>"$tmp"; fi
  mv -f "$tmp" "$path"
}

case "$KEEPER_STATE" in
present)
  if [ "${KEEPER_PARAM_VALUE+set}" != set ]; then
    # A value holding a secret never reaches the environment (docs/state-modules.md).
    answer false "$key: the value holds a secret, which a module gets only in its params file, not in KEEPER_PARAM_VALUE; keep secrets with a module that reads KEEPER_PARAMS_FILE" null
    exit 1
  fi
  line="$key=$KEEPER_PARAM_VALUE"
  if $found && [ "$current" = "$line" ]; then
    answer false "$key is set in $path" null
    exit 0
  fi
  diff="{\"key\": $(json "$key"), \"from\": $was, \"to\": $(json "$KEEPER_PARAM_VALUE")}"
  if [ "$KEEPER_DRY_RUN" = 1 ]; then
    answer true "would set $key in $path" "$diff"
    exit 0
  fi
  rewrite "$line"
  answer true "set $key in $path" "$diff"
  ;;
absent)
  if ! $found; then
    answer false "$key is not in $path" null
    exit 0
  fi
  diff="{\"key\": $(json "$key"), \"from\": $was, \"to\": null}"
  if [ "$KEEPER_DRY_RUN" = 1 ]; then
    answer true "would remove $key from $path" "$diff"
    exit 0
  fi
  rewrite ""
  answer true "removed $key from $path" "$diff"
  ;;
*)
  echo "envfile: unknown state $KEEPER_STATE" >&2
  exit 2
  ;;
esac
