//go:build ignore

// gendocs writes kseg's command reference (markdown and man pages) under
// the directory given, docs by default: "make docs" runs it as
// go run cmd/gendocs.go docs.
package main

import (
	"fmt"
	"os"

	"github.com/kseg/kseg/cmd"
)

func main() {
	dir := "docs"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := cmd.WriteDocs(dir); err != nil {
		fmt.Fprintf(os.Stderr, "gendocs: %v\n", err)
		os.Exit(1)
	}
}
