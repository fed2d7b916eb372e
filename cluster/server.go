package cluster

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Auth is how clients prove who they are to a NATS server: a token, or
// a user and password (nothing: no check, for loopback only).
type Auth struct {
	Token    string
	User     string
	Password string
}

func (a Auth) empty() bool { return a.Token == "" && a.User == "" && a.Password == "" }

func (a Auth) check() error {
	if a.Token != "" && (a.User != "" || a.Password != "") {
		return errors.New("give a token or a user and password, not both")
	}
	if (a.User == "") != (a.Password == "") {
		return errors.New("a user needs a password and a password a user")
	}
	return nil
}

// ServerOptions configure the embedded NATS server.
type ServerOptions struct {
	// Addr is host:port to listen on; a host other than a loopback
	// address needs Auth.
	Addr     string
	StoreDir string // JetStream's storage
	Auth     Auth
	// TLSCert and TLSKey, when set, make clients connect with TLS
	// (tls:// URLs).
	TLSCert, TLSKey string
}

// IsLoopback reports whether a listening host stays on this machine.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve starts an embedded NATS server with JetStream, ready for
// clients, so that machines join a run with nothing but flipzero.
func Serve(opts ServerOptions) (*server.Server, error) {
	host, portText, err := net.SplitHostPort(opts.Addr)
	if err != nil {
		return nil, fmt.Errorf("serve nats %q: want host:port: %w", opts.Addr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || port > 65535 {
		return nil, fmt.Errorf("serve nats %q: bad port", opts.Addr)
	}
	if err := opts.Auth.check(); err != nil {
		return nil, fmt.Errorf("serve nats: %w", err)
	}
	if opts.Auth.empty() && !IsLoopback(host) {
		return nil, fmt.Errorf("serve nats on %q: other machines can reach it, so it needs credentials (a token or a user and password)", opts.Addr)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	if port == 0 {
		port = server.RANDOM_PORT // the server's default otherwise
	}
	so := &server.Options{
		ServerName: "flipzero", Host: host, Port: port,
		JetStream: true, StoreDir: opts.StoreDir,
		MaxPayload: MaxMessage + 64<<10, NoSigs: true, NoLog: true,
		Authorization: opts.Auth.Token, Username: opts.Auth.User, Password: opts.Auth.Password,
	}
	if opts.TLSCert != "" || opts.TLSKey != "" {
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: opts.TLSCert, KeyFile: opts.TLSKey})
		if err != nil {
			return nil, fmt.Errorf("serve nats: TLS: %w", err)
		}
		so.TLSConfig, so.TLS, so.TLSTimeout = tc, true, 2
	}
	s, err := server.NewServer(so)
	if err != nil {
		return nil, fmt.Errorf("serve nats: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("serve nats on %s: not ready in 10 s (is the port taken?)", opts.Addr)
	}
	return s, nil
}

// ConnectOptions say how to reach a NATS server.
type ConnectOptions struct {
	// URL is the server's (nats://host:port, tls:// for TLS; a token or
	// user:password may be in it).
	URL string
	// Server, when set, is an embedded server to talk to in-process.
	Server *server.Server
	Auth   Auth
	// CAFile is a PEM file of the authorities that signed the server's
	// TLS certificate (default: the system's).
	CAFile string
	Name   string // the client's name, in the server's monitoring
}

// Connect connects to a NATS server, reconnecting for ever after a cut
// (a restarted server, a network outage) until the connection is closed.
func Connect(opts ConnectOptions) (*nats.Conn, error) {
	if err := opts.Auth.check(); err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	o := []nats.Option{
		nats.Name(opts.Name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.Timeout(5 * time.Second),
	}
	if opts.Server != nil {
		o = append(o, nats.InProcessServer(opts.Server))
	}
	if opts.Auth.Token != "" {
		o = append(o, nats.Token(opts.Auth.Token))
	}
	if opts.Auth.User != "" {
		o = append(o, nats.UserInfo(opts.Auth.User, opts.Auth.Password))
	}
	if opts.CAFile != "" {
		o = append(o, nats.RootCAs(opts.CAFile))
	}
	nc, err := nats.Connect(opts.URL, o...)
	if err != nil {
		where := redact(opts.URL)
		if opts.Server != nil {
			where = "the embedded server"
		}
		return nil, fmt.Errorf("connect to NATS at %s: %w", where, err)
	}
	return nc, nil
}

// redact is a server URL fit for a message: without the credentials a
// URL may hold.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		if err != nil {
			return "the given URL"
		}
		return raw
	}
	u.User = url.User("REDACTED")
	return u.String()
}
