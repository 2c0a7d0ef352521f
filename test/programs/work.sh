# work.sh - what test_real_programs.py runs in bash: subshells, pipelines,
# command and process substitution, functions, arrays, here-documents and
# background jobs, with deterministic output.
set -e
f() { local n=$1; echo $((n * n)); }
arr=()
for i in $(seq 1 30); do
  arr+=("$(f "$i")")
done
echo "squares: ${#arr[@]} last ${arr[-1]}"
(cd / && echo "subshell in $(pwd)")
printf '%s\n' "${arr[@]}" | sort -n | tail -n 3 | tr '\n' ' '
echo
total=0
while read -r a b; do
  total=$((total + a * b))
done <<HERE
3 4
5 6
7 8
HERE
echo "here-doc total $total"
paste <(seq 1 5) <(seq 6 10) | while read -r x y; do echo $((x + y)); done | wc -l
for j in 1 2 3; do
  ( echo "job $j" | cat >/dev/null ) &
done
wait
s=$(for k in a b c; do echo -n "$k"; done)
echo "joined $s $(echo "${s^^}" | tr ABC XYZ)"
