// Package inspect turns what a fetch saw into the optional sections of a
// scan result: tls, dns, security and emails.
package inspect

import (
	"bytes"
	"crypto/tls"

	"github.com/surveyor/surveyor/pkg/job"
)

// TLS describes cs; verifyErr is why the chain did not verify (nil if it did).
func TLS(cs *tls.ConnectionState, verifyErr error) *job.TLSInfo {
	info := &job.TLSInfo{
		Protocol: tls.VersionName(cs.Version),
		Cipher:   tls.CipherSuiteName(cs.CipherSuite),
		Verified: verifyErr == nil,
		DNSNames: []string{},
	}
	if verifyErr != nil {
		info.VerifyError = verifyErr.Error()
	}
	if len(cs.PeerCertificates) == 0 {
		return info
	}
	leaf := cs.PeerCertificates[0]
	info.Subject = leaf.Subject.String()
	info.Issuer = leaf.Issuer.String()
	info.NotBefore, info.NotAfter = leaf.NotBefore.UTC(), leaf.NotAfter.UTC()
	info.DNSNames = append(info.DNSNames, leaf.DNSNames...)
	info.SelfSigned = bytes.Equal(leaf.RawIssuer, leaf.RawSubject) && leaf.CheckSignatureFrom(leaf) == nil
	return info
}

// CertIssuer is the issuer name fingerprints match ("Let's Encrypt",
// "Cloudflare, Inc."): its organization, or its common name without one.
func CertIssuer(cs *tls.ConnectionState) string {
	if cs == nil || len(cs.PeerCertificates) == 0 {
		return ""
	}
	iss := cs.PeerCertificates[0].Issuer
	if len(iss.Organization) > 0 {
		return iss.Organization[0]
	}
	return iss.CommonName
}
