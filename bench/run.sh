#!/usr/bin/env bash
# Times agentpack side by side with the floors it is measured against, on
# the same generated trees, and prints ratios and peak memory. Ratios are
# what count: the machines this runs on are noisy, so each floor is measured
# in the same run, right beside the command it is compared with.
#
#   bench/run.sh [files ...]        default: 1000 10000
#
# LINES=400 bench/run.sh 10000 makes each file ten times larger (about
# 9 KB instead of 0.9 KB, 40 lines by default): the same commands over ten
# times the bytes show which costs follow bytes and which follow files.
#
# 100000 works too (REPEAT=1 bench/run.sh 100000): every write-heavy run
# writes a new copy of the tree (about 0.5 GB at 100k files), so it needs
# about 3 GB free under $TMPDIR with REPEAT=1 (each command timed once
# instead of the best of 3) and 6 GB without; it takes a few minutes.
#
# Floors: `sha256sum` over the source files (plan, status, no-op deploy),
# `cp -r` of the deployed tree (cold deploy), `rm -rf` of it (rollback).
# When a `chezmoi` binary is on PATH (or named by $CHEZMOI), its cold apply,
# status and no-op apply over the same files are timed too, and agentpack's
# status and durable deploy are printed with chezmoi's time as the floor.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(1000 10000)
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
# Static, as `just build` and the README's install make it.
CGO_ENABLED=0 go build -o "$work/agentpack" ./cmd/agentpack
ap=$work/agentpack
chezmoi=${CHEZMOI:-$(command -v chezmoi || true)}
repeat=${REPEAT:-3}

# best_of N cmd...: the fastest of N runs in milliseconds, and its peak RSS
# in KiB, as "ms rss". $PREP, when set, is evaluated before each run and
# not timed (a fresh folder, a sync).
best_of() {
  local n=$1; shift
  local best="" rss=0
  for _ in $(seq "$n"); do
    local t0 t1 ms m
    if [ -n "${PREP:-}" ]; then eval "$PREP"; fi
    t0=$(date +%s%N)
    /usr/bin/time -f '%M' -o "$work/rss" "$@" >/dev/null 2>"$work/err" || { echo "failed: $*" >&2; cat "$work/err" "$work/rss" >&2; exit 1; }
    m=$(tail -1 "$work/rss")
    t1=$(date +%s%N)
    ms=$(( (t1 - t0) / 1000000 ))
    if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; rss=$m; fi
  done
  echo "$best $rss"
}

# fresh DIR: a new empty folder under DIR, its path also written to
# $work/fresh for the timed command to read. File systems here may create
# files slowly right after many were deleted (online discard), so every
# write-heavy run, floors included, writes into a folder never used before,
# and starts after an untimed sync: it does not pay for the write-back of
# the runs before it (tens of MB of dirty pages each at 10,000 files).
fresh() {
  local f
  f=$(mktemp -d -p "$1" fresh.XXXXXX)
  echo "$f" > "$work/fresh"
  echo "$f"
}

# gen DIR FILES: a repo of FILES/10 skills with 10 files each, deployed to
# the project with codex's project scope. One awk writes every file, so
# 100,000 files take seconds, not the minutes of a process per file.
gen() {
  local dir=$1 files=$2 skills=$(( $2 / 10 ))
  mkdir -p "$dir/repo/modules" "$dir/proj/.git" "$dir/home"
  {
    echo "version: 1"
    echo "profiles: {default: {include_tags: [base]}}"
    echo "targets: {codex: {scope: project}}"
    echo "modules:"
  } > "$dir/repo/agentpack.yaml"
  seq -f "$dir/repo/modules/s%05g/ref" 1 "$skills" | xargs mkdir -p
  awk -v root="$dir/repo/modules" -v n="$skills" -v lines="${LINES:-40}" -v yaml="$dir/repo/agentpack.yaml" 'BEGIN {
    for (s = 1; s <= n; s++) {
      i = sprintf("%05d", s); d = root "/s" i
      f = d "/SKILL.md"
      printf "---\nname: s%s\ndescription: skill %s\n---\nbody\n", i, i > f; close(f)
      for (k = 1; k <= 9; k++) {
        f = d "/ref/f" k ".md"
        for (l = 0; l < lines; l++) print "line " k " of skill " i > f
        close(f)
      }
      printf "  - {id: \"skill:s%s\", type: skill, tags: [base], source: {local_path: {path: modules/s%s}}}\n", i, i >> yaml
    }
  }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) b = 1; printf "%.2f", a / b }'; }

printf '%-8s %-22s %9s %9s %7s %9s\n' files command ms floor_ms ratio rss_MiB
for n in "${sizes[@]}"; do
  d="$work/t$n"
  gen "$d" "$n"
  export HOME=$d/home AGENTPACK_HOME=$d/home/.agentpack CODEX_HOME=$d/home/.codex
  cd "$d/proj"
  row() { # name result floor
    read -r ms rss <<<"$2"; read -r fms _ <<<"$3"
    printf '%-8s %-22s %9s %9s %7s %9s\n' "$n" "$1" "$ms" "$fms" "$(ratio "$ms" "$fms")" "$(( rss / 1024 ))"
  }
  hashfloor=$(best_of "$repeat" sh -c "find '$d/repo/modules' -type f -print0 | xargs -0 sha256sum")
  # cold: nothing cached (no stat cache, no source cache, no kept
  # answers); the rows after it run with the caches warm: the compiled
  # state of an unchanged repo is loaded from one file instead of
  # re-reading its sources, and status, an empty diff and a deploy with
  # nothing to do answer from their kept answer after one stat per path.
  nocache="rm -rf '$AGENTPACK_HOME/cache/load' '$AGENTPACK_HOME/cache/answers' &&"
  # Cold rows are the best of $repeat too, each run after the caches are
  # removed (untimed): one run on a noisy machine says little.
  row "plan (cold)" "$(PREP='rm -rf "$AGENTPACK_HOME/state" "$AGENTPACK_HOME/cache"' best_of "$repeat" "$ap" --repo "$d/repo" plan)" "$hashfloor"
  row "plan" "$(best_of "$repeat" "$ap" --repo "$d/repo" plan)" "$hashfloor"
  # diff (cold) of a project with nothing deployed: every file is a
  # create, printed whole.
  cd "$(fresh "$d")" && mkdir .git
  row "diff (cold)" "$(PREP='rm -rf "$AGENTPACK_HOME/state" "$AGENTPACK_HOME/cache"' best_of "$repeat" "$ap" --repo "$d/repo" diff)" "$hashfloor"
  cpfloor=$(PREP='fresh "$d" >/dev/null && sync' best_of "$repeat" sh -c "cp -r '$d/repo/modules' \"\$(cat '$work/fresh')/m\"")
  copy=$(cat "$work/fresh") # the last copy, for the rm -rf floor
  # Each cold deploy goes to a new project beside the others; the rows
  # after it run in the last one. The first has nothing cached (no source
  # cache: the repo is read, parsed and hashed); the second is a project
  # of a home that planned the repo beside it before, whose compiled state
  # moves to the new project's folder instead.
  row "deploy (cold, no cache)" "$(PREP='cd "$(fresh "$d")" && mkdir .git && rm -rf "$AGENTPACK_HOME/cache/load" "$AGENTPACK_HOME/cache/answers" && sync' best_of "$repeat" "$ap" --repo "$d/repo" deploy --apply --yes)" "$cpfloor"
  row "deploy (cold)" "$(PREP='cd "$(fresh "$d")" && mkdir .git && sync' best_of "$repeat" "$ap" --repo "$d/repo" deploy --apply --yes)" "$cpfloor"
  # The usual order after a deploy: its first status (the deploy's files
  # just written), then the first deploy with nothing to do (the status
  # kept the plan's answer), each after a deploy to a new project.
  deployed='cd "$(fresh "$d")" && mkdir .git && "$ap" --repo "$d/repo" deploy --apply --yes >/dev/null && sleep 0.3'
  row "status (after deploy)" "$(PREP=$deployed best_of "$repeat" "$ap" --repo "$d/repo" status)" "$hashfloor"
  row "deploy (after status)" "$(PREP="$deployed"' && "$ap" --repo "$d/repo" status >/dev/null' best_of "$repeat" "$ap" --repo "$d/repo" deploy --apply --yes)" "$hashfloor"
  cd "$(cat "$work/fresh")"
  row "status (no caches)" "$(best_of "$repeat" sh -c "$nocache '$ap' --repo '$d/repo' status")" "$hashfloor"
  # A home that knows nothing of the deployed files (a new machine, or a
  # teammate's clone of a project whose files are committed): each target
  # file is read and hashed; only the hashes are kept.
  row "status (new home)" "$(PREP='rm -rf "$AGENTPACK_HOME/cache" "$AGENTPACK_HOME/state/statcache"' best_of "$repeat" "$ap" --repo "$d/repo" status)" "$hashfloor"
  row "status" "$(best_of "$repeat" "$ap" --repo "$d/repo" status)" "$hashfloor"
  row "deploy (no-op)" "$(best_of "$repeat" "$ap" --repo "$d/repo" deploy --apply --yes)" "$hashfloor"
  row "diff" "$(best_of "$repeat" "$ap" --repo "$d/repo" diff)" "$hashfloor"
  rmfloor=$(PREP=sync best_of 1 rm -rf "$copy")
  # The preview an interactive rollback shows before it asks: the same
  # walk on a System that only records (nothing written).
  row "rollback (dry run)" "$(best_of "$repeat" "$ap" --repo "$d/repo" rollback --last --dry-run)" "$rmfloor"
  row "rollback" "$(PREP=sync best_of 1 "$ap" --repo "$d/repo" rollback --last --yes)" "$rmfloor"
  # Durable cold deploys (one syncfs barrier), each into a new project,
  # compared below with chezmoi's default apply (which fsyncs each file).
  # syncfs flushes every dirty page of the file system, so what ran before
  # is flushed first (untimed): each side pays for its own files.
  durable=$(PREP='cd "$(fresh "$d")" && mkdir .git && sync' best_of "$repeat" env AGENTPACK_FSYNC=1 "$ap" --repo "$d/repo" deploy --apply --yes)
  lastproj=$(cat "$work/fresh")
  row "deploy (cold, durable)" "$durable" "$cpfloor"
  if [ -n "$chezmoi" ]; then
    # chezmoi over the same files: its source folder is the modules folder
    # (plain names map to the same names), its destination a new folder
    # each run; its state lives in the same throwaway HOME.
    cz=("$chezmoi" --source "$d/repo/modules" --no-tty)
    czapply=$(PREP='fresh "$d" >/dev/null && sync' best_of "$repeat" sh -c "exec \"\$0\" \"\$@\" --destination \"\$(cat '$work/fresh')\" apply --force" "${cz[@]}")
    row "chezmoi apply (cold)" "$czapply" "$cpfloor"
    cz+=(--destination "$(cat "$work/fresh")")
    czstatus=$(best_of "$repeat" "${cz[@]}" status)
    row "chezmoi status" "$czstatus" "$hashfloor"
    row "chezmoi apply (no-op)" "$(best_of "$repeat" "${cz[@]}" apply --force)" "$hashfloor"
    # The same agentpack rows with chezmoi as the floor: below 1 is faster.
    # status runs in the project the last durable deploy wrote.
    cd "$lastproj"
    row "status vs chezmoi" "$(best_of "$repeat" "$ap" --repo "$d/repo" status)" "$czstatus"
    row "durable vs chezmoi" "$durable" "$czapply"
  fi
  # One file edited in place (a line added to a skill's reference file),
  # then planned: the cached state is patched (that file read and hashed,
  # its copies rehashed), nothing listed or compiled.
  cd "$lastproj"
  echo edited >> "$d/repo/modules/s00001/ref/f1.md"
  sleep 0.15
  row "plan (one file edited)" "$(best_of 1 "$ap" --repo "$d/repo" plan)" "$hashfloor"
  # One module in a hundred changed (a line added to its ref files), then
  # deployed in the last project: a small deploy of a large tree, whose
  # manifest is saved in the snapshot as deltas.
  # (awk, not head: head's early exit would fail the pipeline.)
  find "$d/repo/modules" -mindepth 1 -maxdepth 1 | sort | awk -v k="$(( n / 1000 > 0 ? n / 1000 : 1 ))" 'NR <= k' |
    while read -r m; do for f in "$m"/ref/*; do echo changed >> "$f"; done; done
  cd "$lastproj"
  row "deploy (1% changed)" "$(PREP=sync best_of 1 "$ap" --repo "$d/repo" deploy --apply --yes)" "$cpfloor"
  # Nine of every ten files changed in the repo (a line added to each ref
  # file), then planned and deployed once in the last project: updates,
  # each replaced file's bytes saved in the snapshot first (the floor of
  # the deploy is the copy of the tree).
  find "$d/repo/modules" -path '*/ref/*' -type f -exec sh -c 'for f; do echo changed >> "$f"; done' sh {} +
  cd "$lastproj"
  row "plan (updates)" "$(best_of 1 "$ap" --repo "$d/repo" plan)" "$hashfloor"
  row "deploy (updates)" "$(PREP=sync best_of 1 "$ap" --repo "$d/repo" deploy --apply --yes)" "$cpfloor"
  # That deploy rolled back (each replaced file's saved bytes put back),
  # then the first status after it: the updates pending again, the files
  # the rollback wrote found in the stat cache instead of hashed.
  row "rollback (updates)" "$(PREP=sync best_of 1 "$ap" --repo "$d/repo" rollback --last --yes)" "$cpfloor"
  sleep 0.3
  row "status (after rollback)" "$(best_of 1 "$ap" --repo "$d/repo" status)" "$hashfloor"
  cd "$work"
done
