package coverage

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// The files a measurement writes into its directory.
const (
	ProfileFile  = "profile.txt"   // go tool covdata textfmt's merged profile
	JSONFile     = "coverage.json" // Report
	MarkdownFile = "coverage.md"   // per file and function, the unreached blocks
	HTMLFile     = "coverage.html" // the source coloured, as go tool cover -html shows it
)

// Write writes r as JSON and Markdown into dir.
func Write(r *Report, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, JSONFile), append(data, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, MarkdownFile))
	if err != nil {
		return err
	}
	r.Markdown(f)
	return f.Close()
}

// Load reads a report Write wrote (the file or its directory).
func Load(path string) (*Report, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, JSONFile)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read a coverage report: %w (a directory jobconform wrote with --coverage, or its %s)", err, JSONFile)
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// Line is the one-line summary: "1,273 of 1,470 statements (86.6 %)".
func (r *Report) Line() string {
	return fmt.Sprintf("%s of %s statements (%.1f %%)", thousands(r.Reached), thousands(r.Statements), r.Percent())
}

// Markdown writes r for a person: per file, the functions not wholly
// reached, and every block never reached.
func (r *Report) Markdown(w io.Writer) {
	fmt.Fprintf(w, "# Upstream's Job controller reached by %s, Kubernetes %s\n\n", r.What, r.Version)
	fmt.Fprintf(w, "Reached %s.\n", r.Line())
	for _, f := range slices.Sorted(maps.Keys(r.LeftOut)) {
		fmt.Fprintf(w, "Not counted: `%s` (%s).\n", short(f), r.LeftOut[f])
	}
	fmt.Fprintf(w, "\n| file | statements | reached | %% |\n|---|---:|---:|---:|\n")
	for _, f := range r.Files {
		fmt.Fprintf(w, "| `%s` | %d | %d | %.1f |\n", short(f.Name), f.Statements, f.Reached, pct(f.Reached, f.Statements))
	}
	fmt.Fprintf(w, "\n## Functions not wholly reached\n\n| function | file:line | statements | reached |\n|---|---|---:|---:|\n")
	for _, f := range r.Files {
		for _, fn := range f.Funcs {
			if fn.Reached < fn.Statements {
				fmt.Fprintf(w, "| `%s` | %s:%d | %d | %d |\n", fn.Name, short(f.Name), fn.Line, fn.Statements, fn.Reached)
			}
		}
	}
	fmt.Fprintf(w, "\n## Blocks never reached (%d)\n\n| where | function | statements |\n|---|---|---:|\n", len(r.Unreached))
	for _, b := range r.Unreached {
		fmt.Fprintf(w, "| %s:%d–%d | `%s` | %d |\n", short(b.File), b.StartLine, b.EndLine, b.Func, b.Statements)
	}
}

// HTML writes the source coloured by reach (go tool cover -html), run in
// module, the covered build's module, where upstream's source resolves.
func HTML(ctx context.Context, module, profile, out string) error {
	cmd := exec.CommandContext(ctx, "go", "tool", "cover", "-html="+profile, "-o="+out)
	cmd.Dir = module
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go tool cover -html: %v: %s", err, strings.TrimSpace(string(b)))
	}
	return nil
}

// Table compares measurements of one release side by side, as markdown:
// each one's reach, all together, and what each alone reached (no other
// did). Blocks are matched by their place in the source, so the reports
// must be of the same release.
func Table(w io.Writer, reports ...*Report) error {
	if len(reports) == 0 {
		return fmt.Errorf("no coverage reports to compare")
	}
	for _, r := range reports[1:] {
		if r.Version != reports[0].Version {
			return fmt.Errorf("coverage of %s beside %s: blocks are compared within one release", r.Version, reports[0].Version)
		}
	}
	stmts := statementsByKey(reports)
	fmt.Fprintf(w, "| what ran against the built-in (Kubernetes %s) | statements reached | alone (no other row) |\n|---|---:|---:|\n", reports[0].Version)
	for i, r := range reports {
		alone := 0
		for key, b := range r.Blocks {
			if b.Reached && !reachedByAny(reports, key, i) {
				alone += stmts[key]
			}
		}
		fmt.Fprintf(w, "| %s | %s | %d |\n", r.What, r.Line(), alone)
	}
	together := func(title string, rs []*Report) {
		union, total := 0, 0
		for key, n := range stmts {
			total += n
			if reachedByAny(rs, key, -1) {
				union += n
			}
		}
		fmt.Fprintf(w, "| %s | %s of %s statements (%.1f %%) | |\n", title, thousands(union), thousands(total), pct(union, total))
	}
	if len(reports) > 2 {
		together("all but the first together", reports[1:])
	}
	if len(reports) > 1 {
		together("all together", reports)
	}
	return nil
}

// Missed are the blocks of anchor that r does not reach: what r would
// have to reach to match it.
func Missed(anchor, r *Report) []string {
	var out []string
	for key, b := range anchor.Blocks {
		if b.Reached && !r.Blocks[key].Reached {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

func statementsByKey(reports []*Report) map[string]int {
	out := map[string]int{}
	for _, r := range reports {
		for key, b := range r.Blocks {
			out[key] = b.Statements
		}
	}
	return out
}

func reachedByAny(reports []*Report, key string, except int) bool {
	for i, r := range reports {
		if i != except && r.Blocks[key].Reached {
			return true
		}
	}
	return false
}

func short(file string) string { return strings.TrimPrefix(file, kubernetesModule+"/pkg/controller/") }

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
