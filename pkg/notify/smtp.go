package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strings"
	"time"
)

// mailMessage is the whole mail: headers, the event for people, and the
// event as JSON for programs.
func (t *Target) mailMessage(ev *Event) ([]byte, error) {
	doc, err := json.MarshalIndent(ev, "", "  ")
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	hdr := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	hdr("From", t.from)
	hdr("To", strings.Join(t.to, ", "))
	hdr("Subject", mime.QEncoding.Encode("utf-8", "[syslet] "+Title(ev)))
	hdr("Date", ev.Time.Format(time.RFC1123Z))
	hdr("Message-ID", "<"+ev.ID+"@syslet>")
	hdr(HeaderEvent, string(ev.Event))
	hdr("MIME-Version", "1.0")
	hdr("Content-Type", "text/plain; charset=utf-8")
	hdr("Content-Transfer-Encoding", "8bit")
	b.WriteString("\r\n")
	body := append([]string{"syslet " + Title(ev), ""}, lines(ev)...)
	body = append(body, "", "-- ", "The event as JSON:")
	body = append(body, strings.Split(string(doc), "\n")...)
	for _, l := range body {
		b.WriteString(strings.ReplaceAll(l, "\r", "") + "\r\n")
	}
	return b.Bytes(), nil
}

// sendMail delivers msg over SMTP within ctx: smtps:// speaks TLS from
// the start, smtp:// upgrades with STARTTLS whenever the server offers it
// and refuses to send a password over a connection that is not encrypted
// (except to a loopback server).
func (t *Target) sendMail(ctx context.Context, msg []byte) error {
	u, err := url.Parse(t.url)
	if err != nil {
		return Permanent(fmt.Errorf("smtp %s: the URL does not parse", t.where))
	}
	host := u.Hostname()
	fail := func(err error) error {
		err = fmt.Errorf("smtp %s: %w", t.where, err)
		var te *textproto.Error
		if errors.As(err, &te) && te.Code >= 500 {
			return Permanent(err)
		}
		return err
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return fail(err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	tlsConf := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if u.Scheme == "smtps" {
		tc := tls.Client(conn, tlsConf)
		if err := tc.HandshakeContext(ctx); err != nil {
			return fail(err)
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	encrypted := u.Scheme == "smtps"
	if !encrypted {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(tlsConf); err != nil {
				return fail(err)
			}
			encrypted = true
		}
	}
	if t.user != "" {
		if !encrypted && !loopback(host) {
			return Permanent(fmt.Errorf("smtp %s: the server offers no STARTTLS: the password is not sent in clear", t.where))
		}
		if err := c.Auth(smtp.PlainAuth("", t.user, string(t.password), host)); err != nil {
			return fail(err)
		}
	}
	if err := c.Mail(t.from); err != nil {
		return fail(err)
	}
	for _, to := range t.to {
		if err := c.Rcpt(to); err != nil {
			return fail(err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fail(err)
	}
	if _, err := w.Write(msg); err != nil {
		return fail(err)
	}
	if err := w.Close(); err != nil {
		return fail(err)
	}
	if err := c.Quit(); err != nil {
		return fail(err)
	}
	return nil
}
