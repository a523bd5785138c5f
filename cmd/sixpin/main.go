// Command sixpin is a load-generating benchmark harness for LLM inference
// endpoints that binds every figure to the six parameters that decide it.
package main

import "os"

func main() { os.Exit(Main()) }
