#!/usr/bin/env bash
# Checks what review would otherwise have to remember: gofmt, go vet, the
# dependency rules of the layout (docs/architecture.md), and the docs:
#   - controller/... imports no other jobconform package (it ships on its own);
#   - scenarios/..., chaos/... and reports/... import no Ginkgo, no Gomega and
#     nothing of suites/, cmd/ or the cluster providers (they are data, checks
#     and renderers, not tests);
#   - chaos/... imports nothing of scenarios/: scenarios use chaos steps, not
#     the other way round; what both need (internal/pods, internal/yamltypes)
#     lives below both;
#   - reports/... does not import the machinery that runs scenarios;
#   - internal/... (the module's helpers and the cluster providers) imports
#     nothing of suites/ or cmd/: the suites use them, not the other way round;
#     nor the domain (controller/, chaos/, the scenario model and its checks):
#     only the recording's format (scenarios/timeline) and the verdicts'
#     (reports/) reach down to the recorder and the report reader;
#   - internal/options and internal/release are leaves: they import no
#     jobconform package (the command resolves releases for the settings), so
#     every package may read them;
#   - the reference controller holds no fault switch: its faults are source
#     mutations kept in internal/mutants, which edits a copy of controller/
#     and imports no jobconform package (nor does controller/ import it);
#   - no function of suites/ or cmd/ (tests aside) is over 80 lines
#     (hack/funclen);
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
deny "./controller/..." "^$mod/(scenarios|chaos|reports|suites|cmd|internal)(/|\$)" "the reference controller imports no other jobconform package"
for tree in scenarios chaos reports; do
	deny "./$tree/..." "^github.com/onsi/(ginkgo|gomega)|^$mod/suites(/|\$)" "$tree knows no test framework and nothing of suites/"
done
deny "./chaos/..." "^$mod/scenarios(/|\$)" "chaos imports nothing of scenarios/ (scenarios imports chaos)"
deny "./reports/..." "^$mod/(chaos|controller)(/|\$)|^$mod/scenarios(/catalog|/invariants|/pods)?\$" "reports read results, they do not run scenarios"

deny "./internal/..." "^$mod/(suites|cmd)(/|\$)" "internal/ holds what the suites and the CLI use; it imports neither"
deny "./internal/..." "^$mod/(controller|chaos)(/|\$)|^$mod/scenarios(/(invariants|catalog|oracle|bugs))?\$" "internal/ is infrastructure: it imports no controller, chaos step or scenario check (a helper the tests alone call belongs in the tests)"
for leaf in options release; do
	deny "./internal/$leaf/..." "^$mod/" "the settings and the releases are leaves every package may import: they import no jobconform package"
done
deny "./internal/mutants/..." "^$mod/" "the mutants edit controller/'s source, they import nothing of jobconform"
switches=$(grep -n 'Faults\.Has\|inject-fault' controller/*.go controller/cmd/reference-controller/app/*.go 2>/dev/null)
[ -z "$switches" ] || fail "the reference controller holds fault switches; write them as mutants in internal/mutants: $switches"
for tree in scenarios chaos reports; do
	deny "./$tree/..." "^$mod/(cmd|internal/cluster)(/|\$)" "$tree knows no CLI and no cluster provider"
done

# Functions a newcomer can read at once.
long=$(go run ./hack/funclen -max 80 suites cmd) || fail "functions over 80 lines: split them: $long"

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
