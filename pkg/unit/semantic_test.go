package unit

import "testing"

func TestSame(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"keys reordered within a section", "[Container]\nImage=a\nContainerName=x\n", "[Container]\nContainerName=x\nImage=a\n", true},
		{"sections reordered", "[Unit]\nDescription=d\n[Container]\nImage=a\n", "[Container]\nImage=a\n[Unit]\nDescription=d\n", true},
		{"every line sorted, as the earlier syslet wrote", "[Container]\nImage=a\nVolume=/h/b:/b:ro,Z\nVolume=data.volume:/data\n[X-Syslet]\nRemovalAllowed=true\n",
			"[X-Syslet]\nRemovalAllowed=true\n\n[Container]\nVolume=data.volume:/data\nImage=a\nVolume=/h/b:/b:ro,Z\n", true},
		{"spacing, comments, blank lines", "[Service]\nRestart=always\n", "# written by hand\n[Service]\n  Restart = always  \n\n", true},
		{"empty section", "[Unit]\n[Service]\nRestart=always\n", "[Service]\nRestart=always\n", true},
		{"ports as a set", "[Container]\nPublishPort=80:80\nPublishPort=443:443\n", "[Container]\nPublishPort=443:443\nPublishPort=80:80\n", true},
		{"dependencies as words", "[Unit]\nAfter=a.service b.service\n", "[Unit]\nAfter=b.service\nAfter=a.service\n", true},
		{"WantedBy split", "[Install]\nWantedBy=multi-user.target default.target\n", "[Install]\nWantedBy=default.target\nWantedBy=multi-user.target\n", true},
		{"environment with distinct names", "[Container]\nEnvironment=A=1\nEnvironment=B=2\n", "[Container]\nEnvironment=B=2\nEnvironment=A=1\n", true},

		{"value changed", "[Container]\nImage=a\n", "[Container]\nImage=b\n", false},
		{"key added", "[Container]\nImage=a\n", "[Container]\nImage=a\nReadOnly=true\n", false},
		{"same key, other section", "[Service]\nEnvironment=A=1\n", "[Container]\nEnvironment=A=1\n", false},
		{"exec lines reordered", "[Service]\nExecStartPre=/bin/a\nExecStartPre=/bin/b\n", "[Service]\nExecStartPre=/bin/b\nExecStartPre=/bin/a\n", false},
		{"repeated environment name reordered (last wins)", "[Container]\nEnvironment=A=1\nEnvironment=A=2\n", "[Container]\nEnvironment=A=2\nEnvironment=A=1\n", false},
		{"DNS servers reordered", "[Container]\nDNS=1.1.1.1\nDNS=9.9.9.9\n", "[Container]\nDNS=9.9.9.9\nDNS=1.1.1.1\n", false},
		{"subnet and gateway pairs reordered", "[Network]\nSubnet=10.0.0.0/24\nSubnet=10.1.0.0/24\nGateway=10.0.0.1\nGateway=10.1.0.1\n",
			"[Network]\nSubnet=10.1.0.0/24\nSubnet=10.0.0.0/24\nGateway=10.0.0.1\nGateway=10.1.0.1\n", false},
		{"a port duplicated", "[Container]\nPublishPort=80:80\n", "[Container]\nPublishPort=80:80\nPublishPort=80:80\n", false},
		{"marker changed", "[X-Syslet]\nRemovalAllowed=true\n", "[X-Syslet]\nRemovalAllowed=false\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Parse([]byte(tc.a))
			if err != nil {
				t.Fatal(err)
			}
			b, err := Parse([]byte(tc.b))
			if err != nil {
				t.Fatal(err)
			}
			if got := Same(a, b); got != tc.same {
				t.Errorf("Same = %v, want %v\n%s\nvs\n%s", got, tc.same, Normalize(a).Bytes(), Normalize(b).Bytes())
			}
			if got := Same(b, a); got != tc.same {
				t.Errorf("Same is not symmetric")
			}
		})
	}
}
