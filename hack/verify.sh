#!/usr/bin/env bash
# Checks what review would otherwise have to remember: gofmt, go vet, and the
# dependency rules of the layout (README, "How it works"):
#   - controller/... imports no other jobconform package (it ships on its own);
#   - scenarios/..., chaos/... and reports/... import no Ginkgo, no Gomega and
#     nothing of suites/ (they are data, checks and renderers, not tests);
#   - chaos/... does not import the scenario model (scenarios, its catalog or
#     invariants): scenarios use chaos steps, not the other way round; the
#     leaves scenarios/pods, scenarios/timeline and scenarios/yamltypes are shared;
#   - reports/... does not import the machinery that runs scenarios.
#   - README.md's "How it works" names every package.
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
deny "./controller/..." "^$mod/(scenarios|chaos|reports|suites)(/|\$)" "the reference controller imports no other jobconform package"
for tree in scenarios chaos reports; do
	deny "./$tree/..." "^github.com/onsi/(ginkgo|gomega)|^$mod/suites(/|\$)" "$tree knows no test framework and nothing of suites/"
done
deny "./chaos/..." "^$mod/scenarios(/catalog|/invariants)?\$" "chaos must not import the scenario model (scenarios imports chaos)"
deny "./reports/..." "^$mod/(chaos|controller)(/|\$)|^$mod/scenarios(/catalog|/invariants|/pods)?\$" "reports read results, they do not run scenarios"

# README's tour names every package.
for p in $(go list ./... | sed "s#^$mod/##"); do
	grep -q "^- \`$p\` " README.md || fail "README.md (How it works) does not name package $p"
done

[ $status = 0 ] && echo "verify: gofmt, vet and import rules ok"
exit $status
