// Package calc evaluates arithmetic expressions for the calculate tool.
//
// An expression is read in three steps, none of which can run code:
//
//  1. The lexer splits the text into numbers, operators and parentheses;
//     any name, string, comma or other character is refused with an error
//     that says what is not allowed, and so is input over MaxLength bytes
//     or MaxTokens tokens (a 1 MB expression is refused before any work).
//  2. Parse builds an AST by recursive descent (precedence climbing), with
//     a cap on nesting depth so deeply nested input is refused, not
//     followed down the stack.
//  3. Eval walks the tree in float64, refusing division by zero, any
//     result that is not finite (overflow, NaN) and any nonzero result
//     that rounds to 0 (underflow); number literals out of range either
//     way (1e999, 1e-400) are refused by the lexer.
//
// Format renders a result for a model to read: 12 significant digits so
// float noise disappears (84959.99999999999 prints 84960), integers
// without a fractional part.
package calc
