package cli

// The tests run the commands with the built-in methods registered, as
// cmd/dpgnn does (and with the test methods the test files register).
import _ "github.com/dpgnn/dpgnn/methods/all"
