package image_test

import (
	"fmt"

	"github.com/ksa-go/ksa/interop/node/image"
)

// An image of one program: the same files and settings give the same ID
// anywhere, at any time (the layer's files are dated the epoch and owned
// by root).
func Example() {
	img := image.Image{
		Name:       "ksa.local/hello:1",
		Files:      []image.File{{Path: "/hello", Data: []byte("a static binary")}},
		Entrypoint: []string{"/hello"},
	}
	id, err := img.ID()
	if err != nil {
		fmt.Println(err)
		return
	}
	again, _ := img.ID()
	fmt.Println(len(id), id == again)
	// Output: 71 true
}
