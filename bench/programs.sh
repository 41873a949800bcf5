#!/bin/bash
# Records each of a set of everyday programs with both back ends and
# replays each trace into an empty root, then prints one line per
# program and back end: the command's status, whether its output and
# status were those of an untraced run (`as-run`: the program saw
# nothing of the recorder), replay's status, its mismatches and the
# paths that differ. A survey of fidelity, not of speed. Programs whose
# tool is missing are skipped, and said so.
#
# Usage: [AS=USER] bench/programs.sh [BIN] [ROOT-DIR]
#   BIN defaults to target/release/reanimator; ROOT-DIR (default: a
#   temporary directory) is where the replays go: a tmpfs or XFS mount
#   replays onto another file system. AS=USER (run as root) runs every
#   command, recording (ptrace only) and replay as USER, and says so when
#   USER cannot remove a replay root afterwards.
set -uo pipefail

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
    sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
bin=$(realpath "${1:-target/release/reanimator}")
work=$(mktemp -d /var/tmp/reanimator-programs-XXXXXX)
trap 'rm -rf "$work"' EXIT
roots=${2:-$work}
as_user=${AS:-}
backends="ptrace ebpf"
if [ -n "$as_user" ]; then
    # The user needs the binary and the work directory.
    chmod 755 "$work"
    cp "$bin" "$work/reanimator"
    bin="$work/reanimator"
    backends=ptrace
    if [ -z "${2:-}" ]; then
        roots="$work/roots"
        mkdir "$roots" && chown "$as_user" "$roots"
    fi
fi
# Runs a command as AS, or as is.
run() {
    if [ -n "$as_user" ]; then runuser -u "$as_user" -- "$@"; else "$@"; fi
}

# name|tools needed|command (run in a directory holding src/: a copy of
# git's documentation, /etc/services and 200,000 numbers)
programs=(
    "rsync|rsync|rsync -a src/ dst/ && rsync -a --delete src/ dst2/"
    "tar|tar gzip|tar czf a.tgz src && mkdir x && tar xzf a.tgz -C x"
    "sort|sort|sort -S 1M -T . src/nums > sorted && sort -n -S 1M src/nums | tail -1 > last"
    "compress|xz zstd bzip2|xz -T2 -k src/nums && zstd -q -T2 src/services -o s.zst && bzip2 -k src/nums"
    "zip|zip unzip|zip -qr a.zip src && mkdir u && cd u && unzip -q ../a.zip"
    "sed-perl|sed perl|cp src/services s && sed -i s/tcp/TCP/g s && perl -pi -e s/udp/UDP/g s"
    "links|ln mkfifo truncate fallocate|mkdir d && echo a > d/f && ln d/f d/g && ln -s f d/s && cp -al d e && mv e/g e/h && rm d/f && mkfifo p && truncate -s 1G sparse && fallocate -l 1M falloc"
    "git|git|git init -q r && cp -r src/git r/ && cd r && git add -A && git -c user.name=a -c user.email=a@b commit -qm x && git gc -q && git clone -q . ../c"
    "xargs|xargs gzip|mkdir g && cp -r src/git/RelNotes g/ && find g -type f | xargs -P4 -n8 gzip"
    "python|python3|python3 -c 'import sqlite3; d = sqlite3.connect(\"db\"); d.execute(\"create table t(a, b)\"); d.executemany(\"insert into t values(?, ?)\", [(i, str(i) * 10) for i in range(20000)]); d.commit()'"
    "venv|python3|python3 -m venv v && v/bin/python -c 'import sys; print(sys.prefix)'"
    "node|node|node -e 'const fs = require(\"fs\"); fs.mkdirSync(\"n\"); for (let i = 0; i < 200; i++) fs.writeFileSync(\"n/f\" + i, \"x\".repeat(i * 100)); fs.renameSync(\"n/f1\", \"n/g1\"); fs.promises.readFile(\"src/nums\").then(b => fs.promises.writeFile(\"copy\", b))'"
    "cmake|cmake ninja cc|mkdir p && cd p && printf 'cmake_minimum_required(VERSION 3.10)\nproject(p C)\nadd_executable(h h.c)\n' > CMakeLists.txt && echo 'int main(void){return 0;}' > h.c && cmake -G Ninja -S . -B b > /dev/null && ninja -C b > /dev/null"
    "cargo|cargo|export CARGO_HOME=\$PWD/ch; cargo new -q --offline cr && cd cr && cargo build -q --offline"
    "java|java|printf '%s\\n' 'import java.nio.*; import java.nio.channels.*; import java.nio.file.*; import java.util.concurrent.*;' 'public class J { public static void main(String[] a) throws Exception {' 'ExecutorService ex = Executors.newFixedThreadPool(4);' 'for (int i = 0; i < 8; i++) { final int n = i; ex.submit(() -> { Files.writeString(Path.of(\"f\" + n), \"x\".repeat(1000 * n)); return null; }); }' 'ex.shutdown(); ex.awaitTermination(1, TimeUnit.MINUTES);' 'try (FileChannel c = FileChannel.open(Path.of(\"m.bin\"), StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)) {' 'MappedByteBuffer m = c.map(FileChannel.MapMode.READ_WRITE, 0, 1 << 20); for (int i = 0; i < (1 << 20); i += 4096) m.put(i, (byte) i); m.force(); }' 'try (var s = Files.walk(Path.of(\"src\"))) { System.out.println(s.count()); } } }' > J.java && java J.java"
    "flock|flock|for i in 1 2 3 4; do (for j in \$(seq 1 25); do flock lk sh -c 'n=\$(cat cnt 2>/dev/null || echo 0); echo \$((n + 1)) > cnt'; done) & done; wait"
    "procsub|join sort|join <(sort src/nums) <(sort -r src/nums | sort) > joined && sort src/services | cat /dev/stdin > sorted"
    "script|script|script -qc 'ls -la / src > listing' typescript"
    "symlinks|ln cp|ln -s /etc/hostname abs && cat abs > got && mkdir d && ln -s ../src/services d/rel && ln -s d dl && cp dl/rel copy"
    "deep|mkdir|for i in \$(seq 250); do mkdir dddddddddddddddddddd && cd dddddddddddddddddddd || exit 1; done; echo deep > leaf && cat leaf > leaf2"
    "nproc|nproc|nproc"
    "pipeline|yes head|yes | head -c 1 > /dev/null; echo \${PIPESTATUS[0]}"
)
# A fresh working directory for one run of a program.
setup() {
    mkdir -p "$1/src"
    cp -r /usr/share/doc/git "$1/src/" 2> /dev/null
    cp /etc/services "$1/src/"
    seq 1 200000 > "$1/src/nums"
    if [ -n "$as_user" ]; then chown -R "$as_user" "$1"; fi
}
# What the command printed and how it ended, its directory's name taken out.
outcome() {
    sed "s#$1#W#g" "$1/out"
    echo "status $2"
}
printf '%-10s %-7s %6s %6s %6s %11s %7s\n' program backend status as-run replay mismatches differ
for entry in "${programs[@]}"; do
    IFS='|' read -r name tools cmd <<<"$entry"
    missing=""
    for t in $tools; do command -v "$t" > /dev/null || missing="$missing $t"; done
    if [ -n "$missing" ]; then
        printf '%-10s skipped: missing%s\n' "$name" "$missing"
        continue
    fi
    plain="$work/$name-plain"
    setup "$plain"
    (cd "$plain" && run timeout 600 bash -c "$cmd" < /dev/null > out 2> /dev/null)
    untraced=$(outcome "$plain" $?)
    rm -rf "$plain"
    for backend in $backends; do
        w="$work/$name-$backend"
        setup "$w"
        (cd "$w" && run timeout 600 "$bin" record --backend "$backend" --force -o t.rtr -- bash -c "$cmd" \
            < /dev/null > out 2> rec.err)
        status=$?
        same=no
        [ "$(outcome "$w" $status)" = "$untraced" ] && same=yes
        root="$roots/root-$name-$backend"
        rm -rf "$root"
        run timeout 600 "$bin" replay "$w/t.rtr" --root "$root" > "$w/rep.out" 2>&1
        replay=$?
        if ! run rm -rf "$root" 2> /dev/null; then
            echo "$name $backend: $as_user cannot remove the replay root"
            rm -rf "$root"
        fi
        mism=$(grep -o '[0-9]* mismatches;' "$w/rep.out" | grep -o '[0-9]*')
        differ=$(grep -o '[0-9]* differ$' "$w/rep.out" | grep -o '[0-9]*')
        printf '%-10s %-7s %6s %6s %6s %11s %7s\n' "$name" "$backend" "$status" "$same" "$replay" "${mism:-?}" "${differ:-?}"
        rm -rf "$w"
    done
done
