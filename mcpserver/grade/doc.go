// Package grade checks an answer against source texts lexically, for the
// grade_answer tool; there is no model judge, so the same input always
// gets the same grade.
//
// Steps:
//
//  1. The answer is split into sentences (at . ! ? followed by a space,
//     except after a common abbreviation such as "Dr." or "e.g.", and at
//     line breaks, so list items count as sentences).
//  2. A sentence that states a figure (a number, percentage, amount or
//     year) found in no source fails outright: "figures not in sources:
//     2011, 80". Figures compare by value, so 84,960, 84960 and 84960.0
//     are the same figure, and $ and % signs are ignored.
//  3. Otherwise the sentence's content words (lowercased, stopwords and
//     figures dropped, a plural s ignored) are looked up in the sources;
//     if fewer than MinCoverage of them appear, the sentence is flagged as
//     unsupported.
//  4. The score is the fraction of sentences supported.
package grade
