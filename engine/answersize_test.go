package engine

import (
	"encoding/json"
	"testing"
)

// TestStatusMinJSONSizeIsALowerBound: a status's JSON is never smaller
// than what minJSONSize says, so an answer left unencoded as too large
// would have been too large (an empty item is the smallest).
func TestStatusMinJSONSizeIsALowerBound(t *testing.T) {
	for _, n := range []int{0, 1, 7, 3000} {
		d := &StatusData{Drift: make([]DriftItem, n)}
		data, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		if d.minJSONSize() > len(data) {
			t.Fatalf("%d items: minJSONSize %d, but the JSON is %d bytes", n, d.minJSONSize(), len(data))
		}
		if n > 0 && len(data)-d.minJSONSize() > n+300 { // a comma between items, the rest of the object
			t.Fatalf("%d items: minJSONSize %d is far below the %d bytes of empty items: the bound is not of an item", n, d.minJSONSize(), len(data))
		}
	}
}
