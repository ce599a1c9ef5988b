package fetch

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/andybalholm/brotli"
	"golang.org/x/net/html/charset"
)

// presizeMax bounds the buffer readBody sizes from Content-Length.
const presizeMax = 1 << 20

// readBody removes the content encoding and reads at most limit decoded
// bytes; truncated reports that more was available. An encoding we do not
// know is kept as is. size is the announced length of the body as sent
// (-1 if unknown): an uncompressed body is read into a buffer of that size
// instead of one doubled from 512 bytes, which allocated over three times
// the page. The announcement is trusted up to presizeMax only, so a server
// that announces more than it sends cannot make every scan hold the whole
// body limit.
func readBody(r io.Reader, encoding string, size, limit int64) (body []byte, truncated bool, err error) {
	var buf bytes.Buffer
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		if size > 0 {
			buf.Grow(int(min(size, limit+1, presizeMax)) + bytes.MinRead)
		}
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, false, err
		}
		defer zr.Close()
		r = zr
	case "br":
		r = brotli.NewReader(r)
	case "deflate":
		// "deflate" is meant to be zlib-wrapped, but some servers send raw
		// deflate; peek at the header to tell them apart.
		var head [2]byte
		n, err := io.ReadFull(r, head[:])
		if err != nil && n == 0 {
			return nil, false, err
		}
		rest := io.MultiReader(bytes.NewReader(head[:n]), r)
		if n == 2 && head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
			zr, err := zlib.NewReader(rest)
			if err != nil {
				return nil, false, err
			}
			defer zr.Close()
			r = zr
		} else {
			fr := flate.NewReader(rest)
			defer fr.Close()
			r = fr
		}
	}
	n, err := io.Copy(&buf, io.LimitReader(r, limit+1))
	if n > limit {
		return buf.Bytes()[:limit], true, nil
	}
	if errors.Is(err, io.ErrUnexpectedEOF) && buf.Len() > 0 {
		return buf.Bytes(), true, nil
	}
	return buf.Bytes(), false, err
}

// isHTML decides from the Content-Type, or by sniffing when there is none.
func isHTML(ctype string, body []byte) bool {
	if ctype == "" {
		ctype = http.DetectContentType(body)
	}
	mt, _, err := mime.ParseMediaType(ctype)
	if err != nil {
		return false
	}
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// toUTF8 converts body from the charset named by the header, a BOM or a
// <meta charset> in the first KiB.
func toUTF8(body []byte, ctype string) []byte {
	enc, name, certain := charset.DetermineEncoding(body[:min(len(body), 1024)], ctype)
	if name == "utf-8" || enc == nil {
		return body
	}
	// An undeclared (or meta-declared) page of plain ASCII reads the same
	// in any of these encodings: skip the copy the decoder would make.
	if !certain && isASCII(body) {
		return body
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return body
	}
	return out
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
