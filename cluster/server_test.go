package cluster

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T) (cert, key string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "flipzero test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, &tmpl, &tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
	return cert, key
}

// TestServeTLSAndToken: the embedded server with TLS and a token takes a
// client that trusts its certificate and knows the token, and refuses a
// wrong token or a client that does not trust it.
func TestServeTLSAndToken(t *testing.T) {
	cert, key := selfSigned(t)
	s, err := Serve(ServerOptions{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Auth: Auth{Token: "right"}, TLSCert: cert, TLSKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Shutdown(); s.WaitForShutdown() }()
	url := strings.Replace(s.ClientURL(), "nats://", "tls://", 1)
	nc, err := Connect(ConnectOptions{URL: url, Auth: Auth{Token: "right"}, CAFile: cert})
	if err != nil {
		t.Fatalf("a client with the token and the certificate: %v", err)
	}
	if !nc.TLSRequired() {
		t.Errorf("the connection is not TLS")
	}
	nc.Close()
	if nc, err := Connect(ConnectOptions{URL: url, Auth: Auth{Token: "wrong"}, CAFile: cert}); err == nil {
		nc.Close()
		t.Errorf("a wrong token was let in")
	}
	if nc, err := Connect(ConnectOptions{URL: url, Auth: Auth{Token: "right"}}); err == nil {
		nc.Close()
		t.Errorf("a client that does not trust the certificate connected")
	}
}

// TestServeNeedsCredentialsBeyondLoopback: listening where other machines
// reach the server requires a token or a password; loopback does not.
func TestServeNeedsCredentialsBeyondLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.168.1.5:4222"} {
		if s, err := Serve(ServerOptions{Addr: addr, StoreDir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "needs credentials") {
			if s != nil {
				s.Shutdown()
			}
			t.Errorf("%s without credentials: %v", addr, err)
		}
	}
	if _, err := Serve(ServerOptions{Addr: "127.0.0.1:0", StoreDir: t.TempDir(), Auth: Auth{Token: "t", User: "u", Password: "p"}}); err == nil {
		t.Errorf("a token and a password together were accepted")
	}
	if !IsLoopback("127.0.0.1") || !IsLoopback("::1") || !IsLoopback("localhost") || IsLoopback("0.0.0.0") || IsLoopback("") {
		t.Errorf("IsLoopback is wrong")
	}
}

// TestConnectErrorHidesCredentials: a URL's token or password never
// reaches an error message.
func TestConnectErrorHidesCredentials(t *testing.T) {
	for _, u := range []string{"nats://s3cret@127.0.0.1:1", "nats://user:s3cret@127.0.0.1:1"} {
		_, err := Connect(ConnectOptions{URL: u})
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%v", err)
		}
	}
}
