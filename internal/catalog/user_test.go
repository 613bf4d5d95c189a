package catalog

import "testing"

func TestUsers(t *testing.T) {
	c := New()
	if created, err := c.CreateUser(UserSpec{Name: "alice", Verifier: "v1"}, 1); !created || err != nil {
		t.Fatalf("create: %v %v", created, err)
	}
	noErr(t, e2(c.CreateUser(UserSpec{Name: "bob"}, 2)))
	_, err := c.CreateUser(UserSpec{Name: "alice"}, 3)
	wantErr(t, err, CodeDuplicateObject, `user alice already exists`)
	if created, err := c.CreateUser(UserSpec{Name: "alice", IfNotExists: true, Verifier: "other"}, 3); created || err != nil {
		t.Fatalf("IF NOT EXISTS: %v %v", created, err)
	}
	_, err = c.CreateUser(UserSpec{Name: ""}, 3)
	wantErr(t, err, CodeInvalidName, `user name cannot be empty`)
	old, _ := c.User("alice")
	noErr(t, c.AlterUser("alice", "v2", 4))
	u, _ := c.User("alice")
	if u.Verifier != "v2" || u.AlteredCommit != 4 || u.CreatedCommit != 1 || old.Verifier != "v1" {
		t.Fatalf("after ALTER USER: %+v (old %+v)", u, old)
	}
	wantErr(t, c.AlterUser("carol", "v", 5), CodeUndefinedObject, `user carol does not exist`)
	if got := c.Users(); len(got) != 2 || got[0].Name != "alice" || got[1].Name != "bob" {
		t.Fatalf("Users() = %v", got)
	}
	if dropped, err := c.DropUser("bob", false, 6); !dropped || err != nil {
		t.Fatalf("drop: %v %v", dropped, err)
	}
	_, err = c.DropUser("bob", false, 7)
	wantErr(t, err, CodeUndefinedObject, `user bob does not exist`)
	if dropped, err := c.DropUser("bob", true, 7); dropped || err != nil {
		t.Fatalf("IF EXISTS: %v %v", dropped, err)
	}
}
