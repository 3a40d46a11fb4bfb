package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/syslet/syslet/pkg/release"
)

func main() {
	out := flag.String("out", "dist", "write the release into `DIR` (emptied first)")
	arches := flag.String("arch", strings.Join(release.Arches, ","), "build for these `ARCHES` (comma-separated)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "release: unexpected argument %q\n", flag.Arg(0))
		os.Exit(64)
	}
	root, err := os.Getwd()
	if err != nil {
		fail(err)
	}
	arts, err := release.All(root, *out, strings.Split(*arches, ","))
	if err != nil {
		fail(err)
	}
	for _, a := range arts {
		fmt.Printf("%-64s %10d  %s\n", a.Name, a.Size, a.SHA256)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "release:", err)
	os.Exit(1)
}
