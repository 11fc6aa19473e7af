// Package search ranks passages of a small document corpus with Okapi
// BM25, for the search_documents and list_documents tools.
//
// Steps:
//
//  1. Load reads a corpus (an fs.FS of .md/.txt files, a JSON object
//     {"id": "text"}, or a map) once; a document's source id is its file
//     name without the extension.
//
//  2. New splits each document into chunks of about ChunkWords words and
//     indexes each chunk's terms (Tokenize: lowercase, split on anything
//     that is not a letter or digit, drop a small stopword list, fold
//     regular plurals onto the singular).
//
//  3. Search scores every chunk against the query's distinct terms:
//
//     score(q, c) = Σ_t idf(t) · tf(t,c)·(k1+1) / (tf(t,c) + k1·(1 − b + b·|c|/avgdl))
//     idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
//
//     with k1 = 1.2 and b = 0.75, N the number of chunks, df(t) the number
//     of chunks holding t, |c| a chunk's length in terms and avgdl the mean
//     length. The "+1" inside the logarithm (as in Lucene) keeps idf
//     positive for terms found in most chunks.
//
// Nothing here touches the filesystem after loading: queries only read
// the in-memory index.
package search
