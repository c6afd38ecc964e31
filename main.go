// Command kseg inspects and repairs Apache Kafka partition data on disk.
package main

import (
	"os"

	"github.com/kseg/kseg/cmd"
)

func main() { os.Exit(cmd.Execute()) }
