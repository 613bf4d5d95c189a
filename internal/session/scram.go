package session

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// scramIterations is the PBKDF2 iteration count of new verifiers,
// PostgreSQL's default (scram_iterations = 4096).
const scramIterations = 4096

// scramVerifier returns the SCRAM-SHA-256 verifier of password (RFC 5802,
// RFC 7677) in PostgreSQL's text form, so the catalog never holds the
// password itself:
//
//	SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>
//
// with salt and keys in standard base64. SaltedPassword = PBKDF2-HMAC-SHA-256
// of the password; ClientKey = HMAC(SaltedPassword, "Client Key"); StoredKey =
// SHA-256(ClientKey); ServerKey = HMAC(SaltedPassword, "Server Key").
// Passwords are used as given (no SASLprep normalization).
func scramVerifier(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("session: salt: %w", err)
	}
	return scramVerifierWith(password, salt, scramIterations)
}

func scramVerifierWith(password string, salt []byte, iterations int) (string, error) {
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, sha256.Size)
	if err != nil {
		return "", fmt.Errorf("session: pbkdf2: %w", err)
	}
	clientKey := hmacSHA256(salted, "Client Key")
	stored := sha256.Sum256(clientKey)
	serverKey := hmacSHA256(salted, "Server Key")
	enc := base64.StdEncoding
	return "SCRAM-SHA-256$" + strconv.Itoa(iterations) + ":" + enc.EncodeToString(salt) + "$" +
		enc.EncodeToString(stored[:]) + ":" + enc.EncodeToString(serverKey), nil
}

// ScramCheck reports whether password matches a verifier made by CREATE
// USER: the wire server's password authentication and tests use it.
func ScramCheck(verifier, password string) bool {
	rest, ok := strings.CutPrefix(verifier, "SCRAM-SHA-256$")
	if !ok {
		return false
	}
	params, _, ok := strings.Cut(rest, "$")
	if !ok {
		return false
	}
	iterText, saltText, ok := strings.Cut(params, ":")
	if !ok {
		return false
	}
	iter, err := strconv.Atoi(iterText)
	if err != nil || iter <= 0 {
		return false
	}
	salt, err := base64.StdEncoding.DecodeString(saltText)
	if err != nil {
		return false
	}
	again, err := scramVerifierWith(password, salt, iter)
	return err == nil && hmac.Equal([]byte(again), []byte(verifier))
}

func hmacSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}
