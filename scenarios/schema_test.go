package scenarios

import (
	"bytes"
	"os"
	"testing"
)

// The committed schema is what the Go types give: regenerate it with
// go run ./cmd/jobconform schema > scenarios/scenario.schema.json
func TestSchemaFileIsCurrent(t *testing.T) {
	want, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("scenario.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(want)) {
		t.Fatal("scenarios/scenario.schema.json is stale: run go run ./cmd/jobconform schema > scenarios/scenario.schema.json")
	}
}
