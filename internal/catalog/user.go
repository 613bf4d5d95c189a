package catalog

import (
	"slices"
	"strings"
)

// UserSpec is CREATE USER Name WITH PASSWORD ...: the binder hands over
// the password already turned into an opaque verifier (for example a
// SCRAM-SHA-256 secret), so the catalog never holds a password.
type UserSpec struct {
	Name        string
	IfNotExists bool
	Verifier    string
}

// User is a login for the wire server (R13.1).
type User struct {
	Name string
	// Verifier is the opaque password verifier; "" means no password.
	Verifier string
	// CreatedCommit and AlteredCommit are the commits of CREATE USER and of
	// the latest ALTER USER.
	CreatedCommit uint64
	AlteredCommit uint64
}

// CreateUser adds a user. With IfNotExists and a user of that name already
// there, it changes nothing and returns created false.
func (c *Catalog) CreateUser(spec UserSpec, commit uint64) (created bool, err error) {
	if err := c.begin(commit); err != nil {
		return false, err
	}
	if err := checkName("user", spec.Name); err != nil {
		return false, err
	}
	if _, ok := c.users[spec.Name]; ok {
		if spec.IfNotExists {
			return false, nil
		}
		return false, errorf(CodeDuplicateObject, "user %s already exists", spec.Name)
	}
	c.users[spec.Name] = &User{Name: spec.Name, Verifier: spec.Verifier, CreatedCommit: commit, AlteredCommit: commit}
	c.commit = commit
	return true, nil
}

// AlterUser replaces a user's password verifier.
func (c *Catalog) AlterUser(name, verifier string, commit uint64) error {
	if err := c.begin(commit); err != nil {
		return err
	}
	u, ok := c.users[name]
	if !ok {
		return errorf(CodeUndefinedObject, "user %s does not exist", name)
	}
	n := *u
	n.Verifier, n.AlteredCommit = verifier, commit
	c.users[name] = &n
	c.commit = commit
	return nil
}

// DropUser removes a user. Without ifExists an unknown user is an error;
// with it, dropped is false.
func (c *Catalog) DropUser(name string, ifExists bool, commit uint64) (dropped bool, err error) {
	if err := c.begin(commit); err != nil {
		return false, err
	}
	if _, ok := c.users[name]; !ok {
		if ifExists {
			return false, nil
		}
		return false, errorf(CodeUndefinedObject, "user %s does not exist", name)
	}
	delete(c.users, name)
	c.commit = commit
	return true, nil
}

// User returns the user of that name.
func (c *Catalog) User(name string) (*User, bool) {
	u, ok := c.users[name]
	return u, ok
}

// Users returns every user, sorted by name.
func (c *Catalog) Users() []*User {
	out := make([]*User, 0, len(c.users))
	for _, u := range c.users {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b *User) int { return strings.Compare(a.Name, b.Name) })
	return out
}
