// Package matchers compiles case expectations into matcher trees and
// scores executed traces against them.
package matchers
