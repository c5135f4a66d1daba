package translate

import (
	"strconv"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tollgate/tollgate/internal/jsonx"
)

// Small conversions between values and bytes, used throughout the package.

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

func mustJSON(v any) jsontext.Value {
	b, err := jsonx.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
