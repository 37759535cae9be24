package main

import (
	"fmt"

	"github.com/jobconform/jobconform/scenarios"
)

// schema prints the JSON Schema of scenario files.
func schema(args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("schema takes no arguments (got %q)", args)}
	}
	data, err := scenarios.Schema()
	if err != nil {
		return err
	}
	fmt.Println(string(data))
	return nil
}
