package pgwire

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
)

// authenticate decides how the client proves who it is. While the catalog
// has no user, connections from loopback are trusted whatever user name
// they give (R13.1); once one exists, every connection runs SCRAM-SHA-256
// against the user's verifier. Every failure — no such user, no password,
// a wrong proof — is the same FATAL 28P01, so nothing tells a guesser
// which part was wrong.
func (c *conn) authenticate() (bool, error) {
	users := c.srv.eng.Catalog().Users()
	if len(users) == 0 {
		if !remoteLoopback(c.nc.RemoteAddr()) {
			return false, c.fatal("28000", "no user exists, so only connections from this machine are accepted; create one with CREATE USER name PASSWORD '…'")
		}
		c.be.Send(&pgproto3.AuthenticationOk{})
		return true, nil
	}
	verifier := ""
	if u, ok := c.srv.eng.Catalog().User(c.user); ok {
		verifier = u.Verifier
	}
	ok, err := c.scram(verifier)
	if err != nil {
		return false, err
	}
	if !ok {
		c.srv.log.Warn("pgwire: password authentication failed", "user", c.user, "remote", c.nc.RemoteAddr().String())
		return false, c.fatal("28P01", "password authentication failed for user %q", c.user)
	}
	c.be.Send(&pgproto3.AuthenticationOk{})
	return true, nil
}

func remoteLoopback(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return false
}

// scramSecret is a parsed verifier: SCRAM-SHA-256$iter:salt$StoredKey:ServerKey.
type scramSecret struct {
	iter                 int
	salt                 []byte
	storedKey, serverKey []byte
}

func parseVerifier(v string) (scramSecret, bool) {
	rest, ok := strings.CutPrefix(v, "SCRAM-SHA-256$")
	if !ok {
		return scramSecret{}, false
	}
	params, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return scramSecret{}, false
	}
	iterText, saltText, ok1 := strings.Cut(params, ":")
	storedText, serverText, ok2 := strings.Cut(keys, ":")
	if !ok1 || !ok2 {
		return scramSecret{}, false
	}
	var s scramSecret
	var err error
	if s.iter, err = strconv.Atoi(iterText); err != nil || s.iter <= 0 {
		return scramSecret{}, false
	}
	enc := base64.StdEncoding
	if s.salt, err = enc.DecodeString(saltText); err != nil {
		return scramSecret{}, false
	}
	if s.storedKey, err = enc.DecodeString(storedText); err != nil || len(s.storedKey) != sha256.Size {
		return scramSecret{}, false
	}
	if s.serverKey, err = enc.DecodeString(serverText); err != nil || len(s.serverKey) != sha256.Size {
		return scramSecret{}, false
	}
	return s, true
}

// scram runs the server side of SCRAM-SHA-256 (RFC 5802, RFC 7677) without
// channel binding. With no usable verifier (unknown user, no password) it
// goes through the exchange with a made-up salt and fails at the end, as
// PostgreSQL does, so the reply does not reveal whether the user exists.
func (c *conn) scram(verifier string) (bool, error) {
	sec, valid := parseVerifier(verifier)
	if !valid {
		salt := make([]byte, 16)
		rand.Read(salt)
		sec = scramSecret{iter: 4096, salt: salt}
	}
	c.be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{"SCRAM-SHA-256"}})
	if err := c.flush(); err != nil {
		return false, err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeSASL); err != nil {
		return false, err
	}
	msg, err := c.be.Receive()
	if err != nil {
		return false, err
	}
	init, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok {
		return false, c.fatal("08P01", "expected SASL response, got %T", msg)
	}
	if init.AuthMechanism != "SCRAM-SHA-256" {
		return false, c.fatal("28000", "client selected an invalid SASL authentication mechanism")
	}
	clientFirst := string(init.Data)
	// gs2 header: "n,," (no channel binding) or "y,," (client could but
	// thinks the server cannot); "p=" asks for binding we do not offer.
	gs2, bare, ok := cutGS2(clientFirst)
	if !ok {
		return false, c.fatal("08P01", "malformed SCRAM message")
	}
	clientNonce := ""
	for _, attr := range strings.Split(bare, ",") {
		if v, ok := strings.CutPrefix(attr, "r="); ok {
			clientNonce = v
		}
	}
	if clientNonce == "" {
		return false, c.fatal("08P01", "malformed SCRAM message: no nonce")
	}
	nb := make([]byte, 18)
	rand.Read(nb)
	nonce := clientNonce + base64.StdEncoding.EncodeToString(nb)
	serverFirst := "r=" + nonce + ",s=" + base64.StdEncoding.EncodeToString(sec.salt) + ",i=" + strconv.Itoa(sec.iter)
	c.be.Send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)})
	if err := c.flush(); err != nil {
		return false, err
	}
	if err := c.be.SetAuthType(pgproto3.AuthTypeSASLContinue); err != nil {
		return false, err
	}
	msg, err = c.be.Receive()
	if err != nil {
		return false, err
	}
	resp, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return false, c.fatal("08P01", "expected SASL response, got %T", msg)
	}
	clientFinal := string(resp.Data)
	withoutProof, proofText, ok := strings.Cut(clientFinal, ",p=")
	if !ok {
		return false, c.fatal("08P01", "malformed SCRAM message: no proof")
	}
	var gotBinding, gotNonce string
	for _, attr := range strings.Split(withoutProof, ",") {
		if v, ok := strings.CutPrefix(attr, "c="); ok {
			gotBinding = v
		} else if v, ok := strings.CutPrefix(attr, "r="); ok {
			gotNonce = v
		}
	}
	if gotBinding != base64.StdEncoding.EncodeToString([]byte(gs2)) || gotNonce != nonce {
		return false, nil
	}
	proof, err := base64.StdEncoding.DecodeString(proofText)
	if err != nil || len(proof) != sha256.Size || !valid {
		return false, nil
	}
	authMessage := bare + "," + serverFirst + "," + withoutProof
	clientSig := hmacSum(sec.storedKey, authMessage)
	clientKey := make([]byte, sha256.Size)
	for i := range clientKey {
		clientKey[i] = proof[i] ^ clientSig[i]
	}
	stored := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(stored[:], sec.storedKey) != 1 {
		return false, nil
	}
	serverSig := hmacSum(sec.serverKey, authMessage)
	c.be.Send(&pgproto3.AuthenticationSASLFinal{Data: []byte("v=" + base64.StdEncoding.EncodeToString(serverSig))})
	return true, nil
}

// cutGS2 splits a client-first message into its gs2 header (with the
// trailing comma) and the bare message.
func cutGS2(msg string) (gs2, bare string, ok bool) {
	if !strings.HasPrefix(msg, "n,") && !strings.HasPrefix(msg, "y,") {
		return "", "", false
	}
	i := strings.IndexByte(msg[2:], ',')
	if i < 0 {
		return "", "", false
	}
	return msg[:2+i+1], msg[2+i+1:], true
}

func hmacSum(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}
