#!/usr/bin/env bash
# Runs the same kseg commands with two binaries on every data directory
# under FIXTURES and compares what each prints (stdout and stderr) and its
# exit code, byte for byte. Used to check that a release binary (static,
# stripped, -trimpath) behaves as a plain `go build` one does:
#
#   go build -o /tmp/kseg-plain .
#   make dist
#   cmd/internal/releasetool/compare-fixtures.sh /tmp/kseg-plain bin/dist/kseg-linux-amd64 ../shared/fixtures/real
#
# What a run measures is masked on both sides before comparing: verify's
# "checked in 3ms (14.6 MiB/s)" and --recovery-plan's measured
# scan_rate_bytes_per_second and the seconds estimated from it. It prints
# one line per command that differs, then the count, and exits 1 when any
# differs.
set -euo pipefail

if [ $# -ne 3 ]; then
	echo "usage: $0 KSEG_A KSEG_B FIXTURES" >&2
	exit 2
fi
a=$(realpath "$1") b=$(realpath "$2") fixtures=$3
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# mask FILE: the measured durations and rates replaced by "T".
mask() {
	sed -E -i \
		-e 's/checked in [0-9.]+(ns|µs|ms|s|m[0-9.]+s) \([0-9.]+ [KMGT]?i?B\/s\)/checked in T (T)/' \
		-e 's/"(scan_rate_bytes_per_second|seconds)":[-0-9.e+]+/"\1":T/g' "$1"
}

n=0 differ=0
# check ARGS...: runs kseg ARGS with both binaries, compares.
check() {
	n=$((n + 1))
	local ca=0 cb=0
	"$a" "$@" > "$out/a.out" 2> "$out/a.err" < /dev/null || ca=$?
	"$b" "$@" > "$out/b.out" 2> "$out/b.err" < /dev/null || cb=$?
	for f in a.out a.err b.out b.err; do mask "$out/$f"; done
	if [ "$ca" != "$cb" ] || ! cmp -s "$out/a.out" "$out/b.out" || ! cmp -s "$out/a.err" "$out/b.err"; then
		differ=$((differ + 1))
		echo "differs (exit $ca / $cb): kseg $*"
	fi
}

for d in "$fixtures"/*/; do
	d=${d%/}
	check ls "$d"
	check ls -o wide "$d"
	check ls --segments --deep -o json "$d"
	check verify -v "$d"
	check verify -o json --records --recovery-plan "$d"
	check verify -o csv "$d"
	check timeline "$d"
	check timeline -o json --bucket 1h "$d"
	check dump-checkpoint -o json "$d"
	check find -o json --value-contains e --max 50 "$d"
	for p in "$d"/*-[0-9]*/; do
		[ -d "$p" ] || continue
		p=${p%/}
		check dump-log "$p"
		check dump-log --records -o json "$p"
		check dump-index -o json "$p"
		check dump-index --all "$p"
		check lookup --trace "$p" 0
		check lookup -o json "$p" 5
		check lookup -o json "$p" 999999999
		for t in earliest latest max 2024-01-01; do
			check lookup-time -o json "$p" "$t"
		done
		check rebuild --dry-run -o json "$p"
		check diff -o json "$p" "$p"
		for s in "$p"/*.snapshot; do
			[ -f "$s" ] && check dump-snapshot -o json "$s"
		done
		case $(basename "$p") in
		__consumer_offsets-*) check groups -o json "$p" ;;
		esac
	done
done
echo "$n commands compared, $differ differ"
[ "$differ" -eq 0 ]
