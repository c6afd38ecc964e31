package internaltopics

import "fmt"

// __transaction_state records (broker: TransactionLog.readTxnRecordKey /
// readTxnRecordValue): key i16 version 0 then TransactionLogKey; value i16
// version 0 or 1 (flexible) then TransactionLogValue; a null value is a
// tombstone (the transactional id expired). Schemas:
// transaction-coordinator/src/main/resources/common/message/TransactionLog*.json.

var transactionLogKey = schema{
	name: "TransactionLogKey", valid: only(0, 0), flexible: none,
	fields: []field{f("transactionalId", kString, only(0, 0))},
}

var transactionLogValue = schema{
	name: "TransactionLogValue", valid: only(0, 1), flexible: from(1),
	fields: []field{
		f("producerId", kInt64, from(0)),
		f("previousProducerId", kInt64, from(1)).taggedAt(0, from(1)),
		f("nextProducerId", kInt64, from(1)).taggedAt(1, from(1)),
		f("producerEpoch", kInt16, from(0)),
		// Added in Kafka 4.1 (KIP-939, KAFKA-15370), after the broker
		// sources kseg follows.
		f("nextProducerEpoch", kInt16, from(1)).taggedAt(3, from(1)),
		f("transactionTimeoutMs", kInt32, from(0)),
		f("transactionStatus", kInt8, from(0)),
		structs("transactionPartitions", from(0),
			f("topic", kString, from(0)),
			arr("partitionIds", kInt32, from(0)),
		).null(from(0)),
		f("transactionLastUpdateTimestampMs", kInt64, from(0)),
		f("transactionStartTimestampMs", kInt64, from(0)),
		f("clientTransactionVersion", kInt16, from(1)).taggedAt(2, from(1)),
	},
}

// TypeTransaction is Decoded.Type of a __transaction_state record.
const TypeTransaction = "transaction"

// TransactionStateName names a TransactionStatus value (broker:
// TransactionState ids in TransactionMetadata).
func TransactionStateName(id int8) string {
	switch id {
	case 0:
		return "Empty"
	case 1:
		return "Ongoing"
	case 2:
		return "PrepareCommit"
	case 3:
		return "PrepareAbort"
	case 4:
		return "CompleteCommit"
	case 5:
		return "CompleteAbort"
	case 6:
		return "Dead"
	case 7:
		return "PrepareEpochFence"
	}
	return fmt.Sprintf("Unknown(%d)", id)
}

func decodeTransactionState(key, value []byte) Decoded {
	d := Decoded{Decoder: TransactionState, Type: TypeTransaction}
	kv, kb, ok := versionPrefix(key)
	if !ok {
		d.Error = fmt.Sprintf("key of %d bytes has no version", len(key))
		return d
	}
	d.KeyVersion = &kv
	decodeRecord(&d, &transactionLogKey, &transactionLogValue, kb, kv, value)
	if d.Value != nil {
		// The status as the broker names it, right after the number.
		out := make(Fields, 0, len(d.Value)+1)
		for _, x := range d.Value {
			out = append(out, x)
			if x.Name == "transactionStatus" {
				out = append(out, Field{"transactionState", TransactionStateName(int8(x.Value.(int64)))})
			}
		}
		d.Value = out
	}
	return d
}
