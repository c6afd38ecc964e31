package internaltopics

import (
	"math"
	"unicode/utf16"
)

// CoordinatorPartition is the partition of the state topic
// (__consumer_offsets for a group id, __transaction_state for a
// transactional id) that holds id, and so whose leader is its coordinator.
// partitions must be positive.
//
// broker: GroupCoordinatorService.partitionFor (and the older
// GroupMetadataManager.partitionFor) and TransactionStateManager.partitionFor:
// Utils.abs(id.hashCode()) % partitionCount.
func CoordinatorPartition(id string, partitions int32) int32 {
	return kafkaAbs(JavaStringHashCode(id)) % partitions
}

// JavaStringHashCode is java.lang.String.hashCode: s[0]*31^(n-1) + ... +
// s[n-1] over the string's UTF-16 code units, in int32 arithmetic that wraps
// (Go's signed overflow wraps as Java's does). A rune above U+FFFF is two
// code units, its surrogate pair. s must be valid UTF-8.
func JavaStringHashCode(s string) int32 {
	var h int32
	for _, r := range s {
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			h = 31*h + hi
			h = 31*h + lo
			continue
		}
		h = 31*h + r
	}
	return h
}

// kafkaAbs is Kafka's Utils.abs: the absolute value, except that
// Integer.MIN_VALUE (which has none in int32) gives 0. It is not
// Utils.toPositive (n & 0x7fffffff), which the producer's partitioner uses:
// the two differ for every other negative n.
func kafkaAbs(n int32) int32 {
	switch {
	case n == math.MinInt32:
		return 0
	case n < 0:
		return -n
	default:
		return n
	}
}
