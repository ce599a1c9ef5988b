package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/surveyor/surveyor/pkg/netguard"
	"github.com/surveyor/surveyor/pkg/resolver"
)

// Failure sorts fetch errors by what the scanner should do about them.
type Failure int

const (
	// Final failures: trying again cannot help.
	Refused    Failure = iota // the target is not a public address
	NoSuchHost                // the name does not exist
	Redirects                 // the chain is too long or leads nowhere usable
	Other                     // anything else we cannot name
	// Connection failures: the same URL might work on a second try, or
	// over plain http when https failed.
	ConnRefused
	ConnReset
	Timeout
	TLSFailure
	DNSTemporary
)

// Connect reports whether f happened while connecting or handshaking, where
// a retry or the http fallback may succeed.
func (f Failure) Connect() bool { return f >= ConnRefused }

// Classify names the failure behind err and gives a one-line reason.
func Classify(err error) (Failure, string) {
	var refused *netguard.RefusedError
	var dnsErr *net.DNSError
	var recErr tls.RecordHeaderError
	var alert tls.AlertError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	switch {
	case errors.As(err, &refused):
		return Refused, refused.Error()
	case errors.Is(err, ErrTooManyRedirects):
		return Redirects, firstLine(err)
	case strings.HasPrefix(err.Error(), "redirect to unusable location"), strings.HasPrefix(err.Error(), "bad URL"):
		return Redirects, firstLine(err)
	case errors.Is(err, resolver.ErrNotFound), errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return NoSuchHost, "no such host"
	case errors.Is(err, resolver.ErrTemporary), errors.As(err, &dnsErr):
		return DNSTemporary, "DNS lookup failed: " + firstLine(err)
	case errors.Is(err, syscall.ECONNREFUSED):
		return ConnRefused, "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return ConnReset, "connection reset by the server"
	case errors.As(err, &recErr), errors.As(err, &alert), errors.As(err, &certErr), errors.As(err, &unknownAuth),
		strings.Contains(err.Error(), "tls: "):
		return TLSFailure, "TLS handshake failed: " + firstLine(err)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), isTimeout(err):
		return Timeout, "timeout: the server did not answer in time"
	}
	return Other, firstLine(err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	return s
}
