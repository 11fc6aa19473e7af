// Command gen writes synthetic case files for the validation benchmark:
//
//	go run ./bench/casegen/gen -n 1000 DIR
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/toolward/toolward/bench/casegen"
)

func main() {
	n := flag.Int("n", 1000, "number of case files")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: gen [-n N] DIR")
		os.Exit(2)
	}
	if err := casegen.Write(flag.Arg(0), *n); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
