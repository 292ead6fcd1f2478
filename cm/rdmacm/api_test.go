package rdmacm

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The exported types embed no unexported type: go doc would show it to users as part of the type
// (as it showed listenCore in Listener), and its fields and methods would leak into the API.
func TestNoUnexportedEmbedding(t *testing.T) {
	for _, v := range []any{Listener{}, UDListener{}, Conn{}, UDConn{}, Agent{}, Options{}, UDOptions{}, Config{}, Stats{},
		Event{}, JoinOptions{}, Multicast{}} {
		typ := reflect.TypeOf(v)
		for f := range typ.Fields() {
			assert.False(t, f.Anonymous && !f.IsExported(), "%v embeds the unexported %v", typ, f.Type)
		}
	}
}
