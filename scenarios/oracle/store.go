// store: the built-in's observations kept, a file per scenario.

package oracle

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Store keeps the built-in's observations of one release, a file per
// scenario, so that another controller's run (in another process, or in a
// later run: --oracle-from) finds its oracle.
type Store struct{ Dir string }

func (s Store) path(scenario string) string { return filepath.Join(s.Dir, scenario+".json") }

// Put writes o as scenario's oracle; the file appears whole (renamed into place).
func (s Store) Put(scenario string, o *Observation) error {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.Dir, ".put-")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path(scenario))
}

// Get reads scenario's oracle; ok is false when there is none yet.
func (s Store) Get(scenario string) (o *Observation, ok bool, err error) {
	data, err := os.ReadFile(s.path(scenario))
	if os.IsNotExist(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	o = &Observation{}
	if err := json.Unmarshal(data, o); err != nil {
		return nil, false, fmt.Errorf("oracle %s: %w", s.path(scenario), err)
	}
	return o, true, nil
}

// Claim marks that the built-in's run of scenario has started here, so
// that another controller's run waits for it rather than running its own;
// false when it was marked already.
func (s Store) Claim(scenario string) (bool, error) {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return false, err
	}
	f, err := os.OpenFile(filepath.Join(s.Dir, scenario+".started"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if os.IsExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, f.Close()
}

// ClaimedAt is when the built-in's run of scenario was marked started
// (ok false: it was not).
func (s Store) ClaimedAt(scenario string) (at time.Time, ok bool) {
	fi, err := os.Stat(filepath.Join(s.Dir, scenario+".started"))
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}
