#!/usr/bin/env bash
# npm start / npm test (package.json's "start" and "test"): installs what is missing (Bun from
# npm, the locked dependencies, the system tools), then runs the server or the tests with Bun.
# Needs only bash and npm, so that a fresh machine runs the project with one command.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: npm start [-- --help]              (same as: bash src/cli/run.sh start; bun run start;
                                           its settings are environment variables: PORT=8081 npm start)
       npm test  [-- bun test's options]   (same as: bash src/cli/run.sh test;  bun run test)
       bash src/cli/run.sh setup           install what is missing, run nothing

Each first installs what is missing, then runs Bun in the repository's directory:
  - Bun 1.4.5, with "npm install -g bun@1.4.5" (into ~/.local when npm's global directory is not writable);
  - the dependencies, checked against bun.lock (offline when they are already there): for start
    only what the server needs, with "bun install --production --frozen-lockfile --filter tome";
    for test and setup all of them (the tools, and the examples' LanceDB and LangChain), with
    "bun install --frozen-lockfile";
  - the system tools: bzip2, xz and gzip (to read compressed dumps) and, for test and setup,
    pdftotext and pdfinfo (package poppler-utils), chromium (the docs and dashboard tests), python3
    (the Python client example), redis-server, redis-cli (redis-tools) and haproxy (the
    replica tests, which start their own; never the machine's Redis service), with apt-get
    when run as root; otherwise it says what to install.
Then start runs "bun src/cli/start.ts" (see npm start -- --help) and test runs "bun test --parallel=2
--timings=test/timings.json": two test files at a time, each in its own process, the longest first
(test/timings.json: each file's time in a whole run; npm test -- --update-timings writes it anew), so that
no long file starts last (npm test -- --parallel=N runs N at a time).
EOF
}

cd "$(dirname "${BASH_SOURCE[0]}")/../.."
say() { echo "run.sh: $*" >&2; }
# The Bun the project is tested with (a newer one may change what the tests pin down).
BUN_PACKAGE=bun@1.4.5
installed=()

command_name=${1:-}
case "$command_name" in
  -h | --help | help) usage; exit 0 ;;
  start | test | setup) shift ;;
  *) usage >&2; exit 2 ;;
esac

help_wanted=
for arg in "$@"; do
  case "$arg" in -h | --help) help_wanted=1 ;; esac
done
# setup runs nothing after its installs: an argument (setup --dry-run) would be ignored while it installed everything.
if [ "$command_name" = setup ] && [ -z "$help_wanted" ] && [ $# -gt 0 ]; then
  say "setup takes no arguments, not: $*. It installs what is missing (see --help)."
  exit 2
fi

# Bun's package puts its binary in place with an install script, which an npm with allow-scripts
# (npm 11.x) runs while warning that it is "not yet covered by allowScripts": allowed by name.
allow_bun_script() {
  local config
  config=$(npm config ls -l 2>/dev/null) || return 0
  case $'\n'"$config" in *$'\n'"allow-scripts "*) echo "--allow-scripts=bun" ;; esac
}

ensure_bun() {
  if command -v bun >/dev/null 2>&1; then return; fi
  local prefix dir
  prefix=$(npm prefix -g 2>/dev/null)
  # Installed by an earlier run into a directory that is not on PATH.
  for dir in "$prefix/bin" "$HOME/.local/bin"; do
    if [ -x "$dir/bun" ]; then
      export PATH="$dir:$PATH"
      return
    fi
  done
  if [ -w "$prefix" ] || [ -w "$prefix/lib" ]; then
    installed+=(Bun)
    say "Bun is not installed: npm install -g $BUN_PACKAGE"
    npm install -g $(allow_bun_script) "$BUN_PACKAGE" >&2
  else
    prefix="$HOME/.local"
    installed+=(Bun)
    say "Bun is not installed and npm's global directory is not writable: npm install -g --prefix $prefix $BUN_PACKAGE"
    npm install -g $(allow_bun_script) --prefix "$prefix" "$BUN_PACKAGE" >&2
    say "Bun is in $prefix/bin: add it to PATH to run bun yourself."
  fi
  export PATH="$prefix/bin:$PATH"
  hash -r
  command -v bun >/dev/null 2>&1 || { say "npm installed Bun, but no bun command is to be found in $prefix/bin or on PATH."; exit 1; }
}

# The server's dependencies (start), or every one (test, setup): bun install's arguments.
install_args() {
  if [ "$command_name" = start ]; then echo "--production --frozen-lockfile --filter tome"; else echo "--frozen-lockfile"; fi
}

ensure_dependencies() {
  local log args
  args=$(install_args)
  if [ ! -d node_modules ]; then
    installed+=("the dependencies")
    say "installing the dependencies: bun install $args"
    bun install $args >&2
    return
  fi
  if ! log=$(bun install $args 2>&1); then
    echo "$log" >&2
    say "bun install $args failed (above): the dependencies do not match bun.lock, or could not be downloaded."
    exit 1
  fi
  # Silent when nothing was missing.
  case "$log" in *"(no changes)"*) ;; *) installed+=("the dependencies"); echo "$log" >&2 ;; esac
}

# tool:package pairs, installed with apt-get when missing.
ensure_tools() {
  local required=$1
  shift
  local missing=() packages=() pair tool package
  for pair in "$@"; do
    tool=${pair%%:*}
    package=${pair#*:}
    if ! command -v "$tool" >/dev/null 2>&1; then
      missing+=("$tool")
      case " ${packages[*]-} " in *" $package "*) ;; *) packages+=("$package") ;; esac
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    installed+=("${packages[@]}")
    say "installing ${packages[*]} (for ${missing[*]}): apt-get install"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >&2
    return
  fi
  local advice="${missing[*]} missing: install ${packages[*]} (Debian/Ubuntu: sudo apt-get install ${packages[*]})"
  if [ "$required" = required ]; then
    say "$advice, then run this again."
    exit 1
  fi
  say "warning: $advice (needed to build a snapshot from a compressed dump)."
}

# --help after a command: this usage, then the command's own. The server's settings are its
# --help, which needs Bun and the dependencies: on a fresh machine they are installed first
# (as npm start would), the system tools are not.
if [ -n "$help_wanted" ]; then
  usage
  [ "$command_name" = setup ] && exit 0
  ensure_bun
  [ "$command_name" = start ] && ensure_dependencies
  echo
  case "$command_name" in start) exec bun src/cli/start.ts --help ;; test) exec bun test --help ;; esac
fi

ensure_bun
ensure_dependencies
if [ "$command_name" = start ]; then
  ensure_tools optional bzip2:bzip2 xz:xz-utils gzip:gzip
else
  ensure_tools required bzip2:bzip2 xz:xz-utils gzip:gzip pdftotext:poppler-utils pdfinfo:poppler-utils chromium:chromium python3:python3 \
    redis-server:redis-server redis-cli:redis-tools haproxy:haproxy
fi

if [ ${#installed[@]} -gt 0 ]; then
  say "installed $(IFS=,; echo "${installed[*]}" | sed 's/,/, /g'); bun $(bun --version)."
elif [ "$command_name" = setup ]; then
  say "bun $(bun --version), the dependencies and the system tools: already installed."
fi
case "$command_name" in
  start) exec bun src/cli/start.ts "$@" ;;
  # Two files at a time: on CI's 2 cores the suite took 971 s against 1,256 s one at a time (session 40, a quiet machine).
  test) exec bun test --parallel=2 --timings=test/timings.json "$@" ;;
esac
