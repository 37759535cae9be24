// Package coverage says how much of upstream's Job controller a run
// reached (issue #69): the counters a covered kube-controller-manager
// (k8sbin.EnsureCovered) or upstream's own tests wrote, merged with
// go tool covdata, then summed by file and function against upstream's
// source, with every block never reached listed. Only reached or not is
// read: counts may add up twice (a snapshot beside the exit's own file).
package coverage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/cover"
)

// Report is what one measurement reached: of which release, by what.
type Report struct {
	// Version is the Kubernetes release measured.
	Version string `json:"version"`
	// What ran against the controller: "the conformance catalog",
	// "upstream's unit tests", …
	What string `json:"what"`
	// Statements and Reached count the statements of the files counted
	// (LeftOut's are not).
	Statements int `json:"statements"`
	Reached    int `json:"reached"`
	// Files are the files counted, by import path, sorted.
	Files []File `json:"files"`
	// Unreached are the blocks of the counted files never reached, in
	// source order.
	Unreached []Block `json:"unreached"`
	// LeftOut are files of the covered packages not counted, with why.
	LeftOut map[string]string `json:"leftOut,omitempty"`
	// Blocks holds every block of the counted files, reached or not, by
	// its key (Block.Key): what Table and Missed compare.
	Blocks map[string]Reach `json:"blocks"`
}

// Reach is a block's statements and whether any run reached it.
type Reach struct {
	Statements int  `json:"n"`
	Reached    bool `json:"hit,omitempty"`
}

// File is one source file's statements.
type File struct {
	Name       string `json:"name"`
	Statements int    `json:"statements"`
	Reached    int    `json:"reached"`
	Funcs      []Func `json:"funcs"`
}

// Func is one function's statements (a method as Type.Name).
type Func struct {
	Name       string `json:"name"`
	Line       int    `json:"line"`
	Statements int    `json:"statements"`
	Reached    int    `json:"reached"`
}

// Block is a stretch of source Go's coverage counts as one.
type Block struct {
	File       string `json:"file"`
	Func       string `json:"func"`
	StartLine  int    `json:"startLine"`
	StartCol   int    `json:"startCol"`
	EndLine    int    `json:"endLine"`
	EndCol     int    `json:"endCol"`
	Statements int    `json:"statements"`
}

// Key names a block the same way in every report of a release.
func (b Block) Key() string {
	return fmt.Sprintf("%s:%d.%d,%d.%d", b.File, b.StartLine, b.StartCol, b.EndLine, b.EndCol)
}

// Percent is the share of statements reached.
func (r *Report) Percent() float64 { return pct(r.Reached, r.Statements) }

// LeftOut are files of the covered packages that measurements do not
// count, and why: read in upstream's source at v1.37.1. A key ending in
// "/" leaves out every file below it.
var LeftOut = map[string]string{
	"k8s.io/kubernetes/pkg/controller/job/job_scheduling_manager.go": "the GenericWorkload scheduling path: alpha, its feature gate off by default (as in every test here)",
	"k8s.io/kubernetes/pkg/controller/job/config/":                   "the controller-manager's configuration types of the Job controller (generated conversions and copies), read at its start, not what it does with a Job",
}

// leftOut says why file is not counted ("", false: it is).
func leftOut(file string) (string, bool) {
	for k, why := range LeftOut {
		if k == file || (strings.HasSuffix(k, "/") && strings.HasPrefix(file, k)) {
			return why, true
		}
	}
	return "", false
}

// Merge writes the counters of dirs (each holding covmeta.* and
// covcounters.* files) as one text profile at out, with go tool covdata.
func Merge(ctx context.Context, out string, dirs ...string) error {
	var inputs []string
	for _, d := range dirs {
		meta, _ := filepath.Glob(filepath.Join(d, "covmeta.*"))
		if len(meta) > 0 {
			inputs = append(inputs, d)
		}
	}
	if len(inputs) == 0 {
		return fmt.Errorf("no coverage counters in %s: did the covered controller-manager run (jobconform run --coverage, the built-in under test or as the oracle)?", strings.Join(dirs, ", "))
	}
	cmd := exec.CommandContext(ctx, "go", "tool", "covdata", "textfmt", "-i="+strings.Join(inputs, ","), "-o="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go tool covdata textfmt: %v: %s", err, bytes.TrimSpace(b))
	}
	return nil
}

// Summarize reads the text profile and sums it by file and function
// against the source under srcRoot (the directory of module
// k8s.io/kubernetes: a file k8s.io/kubernetes/x/y.go is srcRoot/x/y.go).
func Summarize(profile, srcRoot, version, what string) (*Report, error) {
	profiles, err := cover.ParseProfiles(profile)
	if err != nil {
		return nil, fmt.Errorf("read coverage profile %s: %w", profile, err)
	}
	r := &Report{Version: version, What: what, LeftOut: map[string]string{}, Blocks: map[string]Reach{}}
	for _, p := range profiles {
		if !strings.HasPrefix(p.FileName, kubernetesModule+"/") {
			continue // the covered build's own main (k8sbin.EnsureCovered)
		}
		if why, ok := leftOut(p.FileName); ok {
			r.LeftOut[p.FileName] = why
			continue
		}
		funcs, err := functions(filepath.Join(srcRoot, strings.TrimPrefix(p.FileName, kubernetesModule+"/")))
		if err != nil {
			return nil, err
		}
		f := File{Name: p.FileName}
		byName := map[string]*Func{}
		for _, pb := range p.Blocks {
			b := Block{File: p.FileName, StartLine: pb.StartLine, StartCol: pb.StartCol, EndLine: pb.EndLine, EndCol: pb.EndCol, Statements: pb.NumStmt}
			fn := enclosing(funcs, pb.StartLine, pb.StartCol)
			b.Func = fn.Name
			reached := pb.Count > 0
			key := b.Key()
			if prev, ok := r.Blocks[key]; ok { // one block, two profiles
				reached = reached || prev.Reached
			}
			r.Blocks[key] = Reach{Statements: b.Statements, Reached: reached}
			ff := byName[fn.Name]
			if ff == nil {
				ff = &Func{Name: fn.Name, Line: fn.Line}
				byName[fn.Name] = ff
			}
			ff.Statements += b.Statements
			f.Statements += b.Statements
			if reached {
				ff.Reached += b.Statements
				f.Reached += b.Statements
			} else {
				r.Unreached = append(r.Unreached, b)
			}
		}
		for _, fn := range byName {
			f.Funcs = append(f.Funcs, *fn)
		}
		slices.SortFunc(f.Funcs, func(a, b Func) int { return a.Line - b.Line })
		r.Statements += f.Statements
		r.Reached += f.Reached
		r.Files = append(r.Files, f)
	}
	slices.SortFunc(r.Files, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	slices.SortStableFunc(r.Unreached, cmpBlocks)
	return r, nil
}

func cmpBlocks(a, b Block) int {
	if c := strings.Compare(a.File, b.File); c != 0 {
		return c
	}
	if a.StartLine != b.StartLine {
		return a.StartLine - b.StartLine
	}
	return a.StartCol - b.StartCol
}

const kubernetesModule = "k8s.io/kubernetes"

// ModuleDir is the directory of k8s.io/kubernetes as the module at dir
// (the covered build's) resolves it: upstream's source.
func ModuleDir(ctx context.Context, dir string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", kubernetesModule)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("find %s's source from %s: %v", kubernetesModule, dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}
