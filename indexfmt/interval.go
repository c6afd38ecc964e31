package indexfmt

import "fmt"

// DefaultIndexIntervalBytes is index.interval.bytes' default
// (ServerLogConfigs.LOG_INDEX_INTERVAL_BYTES_DEFAULT).
const DefaultIndexIntervalBytes = 4096

// IndexEveryBatch, in an option whose zero value means the default, asks
// for index.interval.bytes = 0: every batch but a segment's first gets an
// offset index entry.
const IndexEveryBatch = -1

// IndexInterval resolves such an option to the index.interval.bytes it
// stands for: 0 is DefaultIndexIntervalBytes, IndexEveryBatch is 0. Any
// other negative value is an error, as the broker refuses it
// (LogConfig's ConfigDef: atLeast(0)).
func IndexInterval(option int64) (int64, error) {
	switch {
	case option == 0:
		return DefaultIndexIntervalBytes, nil
	case option == IndexEveryBatch:
		return 0, nil
	case option < 0:
		return 0, fmt.Errorf("index.interval.bytes %d: want >= 0", option)
	}
	return option, nil
}
