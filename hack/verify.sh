#!/usr/bin/env bash
# Checks what review would otherwise have to remember: gofmt, go vet, the
# dependency rules of the layout (docs/architecture.md), and the docs:
#   - every package stands on a floor (hack/floors: leaves, infrastructure,
#     domain, reports, suites, command) and imports nothing of a floor above
#     its own, for every pair of packages; docs/architecture.md holds the
#     floors and each package's imports as hack/floors -doc writes them;
#   - within the floors: controller/... imports no other jobconform package
#     (it ships on its own); scenarios/..., chaos/... and reports/... import
#     no Ginkgo, no Gomega (they are data, checks and renderers, not tests);
#     chaos/... imports nothing of scenarios/ (scenarios use chaos steps, not
#     the other way round); reports/... does not import the machinery that
#     runs scenarios; the leaves import no jobconform package;
#   - the reference controller holds no fault switch: its faults are source
#     mutations kept in internal/mutants, which edits a copy of controller/
#     and imports no jobconform package (nor does controller/ import it);
#   - no function of suites/ or cmd/ (tests aside) is over 80 lines
#     (hack/funclen); no file of internal/ or cmd/ (tests aside) over 500
#     lines unless its opening comment says why (a line "Longer than 500
#     lines: ...");
#   - commit subjects since the rule (1b93b37) are at most 72 characters;
#   - docs/architecture.md names every package; README.md's first screen
#     holds make run and make test; README.md is at most 200
#     lines and links every page of docs/; every relative link of README.md
#     and docs/ leads to a file.
# Exits non-zero, naming each broken rule and the import path that breaks it.
set -uo pipefail
cd "$(dirname "$0")/.."
mod=$(go list -m)
status=0
fail() { echo "verify: $*" >&2; status=1; }

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))
[ -z "$unformatted" ] || fail "gofmt would change: $unformatted (run make fmt)"

go vet ./... || fail "go vet found problems"

# deny PACKAGES PATTERN WHY: no package matched by PACKAGES may depend (directly
# or not) on an import path matching the extended regexp PATTERN.
deny() {
	local pkgs=$1 pattern=$2 why=$3 p bad
	for p in $(go list "$pkgs"); do
		bad=$(go list -deps "$p" | grep -E "$pattern" | grep -vx "$p" || true)
		[ -z "$bad" ] || fail "$p depends on $(echo $bad | tr ' ' '\n' | tail -n 1)$( [ $(echo $bad | wc -w) -gt 1 ] && echo " (and $(( $(echo $bad | wc -w) - 1 )) more)"): $why"
	done
}
# The floors: no import runs up, and the architecture page shows them as
# the code has them.
go run ./hack/floors || fail "an import runs up a floor (above)"
generated=$(go run ./hack/floors -doc)
documented=$(sed -n '/<!-- floors:begin/,/<!-- floors:end -->/p' docs/architecture.md)
[ "$generated" = "$documented" ] || fail "docs/architecture.md's floors section is not what go run ./hack/floors -doc writes: regenerate it (hack/floors -doc, between the floors:begin and floors:end lines)"

deny "./controller/..." "^$mod/(scenarios|chaos|reports|suites|cmd|internal)(/|\$)" "the reference controller imports no other jobconform package"
for tree in scenarios chaos reports; do
	deny "./$tree/..." "^github.com/onsi/(ginkgo|gomega)" "$tree knows no test framework"
done
deny "./chaos/..." "^$mod/scenarios(/|\$)" "chaos imports nothing of scenarios/ (scenarios imports chaos)"
deny "./reports/..." "^$mod/(chaos|controller)(/|\$)|^$mod/scenarios(/catalog|/invariants|/pods)?\$" "reports read results, they do not run scenarios"
for leaf in options release yamltypes timeline; do
	deny "./internal/$leaf/..." "^$mod/" "the leaves are what every package may import: they import no jobconform package"
done
deny "./internal/mutants/..." "^$mod/" "the mutants edit controller/'s source, they import nothing of jobconform"
switches=$(grep -n 'Faults\.Has\|inject-fault' controller/*.go controller/cmd/reference-controller/app/*.go 2>/dev/null)
[ -z "$switches" ] || fail "the reference controller holds fault switches; write them as mutants in internal/mutants: $switches"
for tree in scenarios chaos reports; do
	deny "./$tree/..." "^$mod/(cmd|internal/cluster)(/|\$)" "$tree knows no CLI and no cluster provider"
done

# Functions a newcomer can read at once.
long=$(go run ./hack/funclen -max 80 suites cmd) || fail "functions over 80 lines: split them: $long"
# Files a newcomer can read at once, or that say why not.
for f in $(git ls-files 'internal/*.go' 'cmd/*.go' | grep -v '_test.go$'); do
	[ "$(wc -l < "$f")" -le 500 ] || grep -q '^// Longer than 500 lines: ' "$f" || fail "$f has $(wc -l < "$f") lines: split it by what each part is for, or say why not in its opening comment (// Longer than 500 lines: ...)"
done

# docs/architecture.md names every package.
for p in $(go list ./... | sed "s#^$mod/##"); do
	grep -q "^- \`$p\` " docs/architecture.md || fail "docs/architecture.md does not name package $p"
done
# README.md's first screen (24 lines) holds the two commands of a newcomer.
for c in "make run" "make test"; do
	head -n 24 README.md | grep -qx "    $c" || fail "README.md's first 24 lines do not hold the command '$c' (an indented line of its own)"
done
# README.md stays short and leads to every page of docs/.
lines=$(wc -l < README.md)
[ "$lines" -le 200 ] || fail "README.md has $lines lines: keep it at most 200 (the rest belongs in docs/)"
for d in docs/*.md; do
	grep -q "](${d})\|](${d}#" README.md || fail "README.md does not link $d"
done
# Relative links lead to files.
for f in README.md docs/*.md; do
	for link in $(grep -oE '\]\([^)#: ]+(#[^)]*)?\)' "$f" | sed -E 's/^\]\(//; s/\)$//; s/#.*//' | sort -u); do
		[ -e "$(dirname "$f")/$link" ] || fail "$f links $link, which does not exist"
	done
done
# Commit subjects are at most 72 characters (.githooks/commit-msg) since the
# rule was made (a clone without that commit, shallow, is not checked).
since=1b93b37
if git cat-file -e "$since^{commit}" 2>/dev/null; then
	long=$(git log --format='%h %s' "$since..HEAD" | awk 'length($0) - index($0, " ") > 72')
	[ -z "$long" ] || fail "commit subjects over 72 characters (the detail belongs in the body): $long"
fi

# The release matrix is generated into docs/matrix.md, not the README.
! grep -q 'matrix:begin' README.md || fail "README.md holds the generated matrix: it belongs in docs/matrix.md"

[ $status = 0 ] && echo "verify: gofmt, vet and import rules ok"
exit $status
