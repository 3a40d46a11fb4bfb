// Command sbomprog is a small program linked from a few of syslet's
// modules: TestSBOM builds it and checks the SBOM of the binary.
package main

import (
	"fmt"

	"github.com/go-chi/chi/v5"
	"github.com/rs/zerolog"
	"golang.org/x/crypto/ssh"
)

func main() {
	fmt.Println(chi.NewRouter() != nil, zerolog.InfoLevel, ssh.KeyAlgoED25519)
}
