// Package schema holds toolward's CUE schema (#Case, #Matcher, #Config),
// embedded in the binary, and loads case files and run configs through it
// into the Go types of this package, with file:line:col errors.
package schema
