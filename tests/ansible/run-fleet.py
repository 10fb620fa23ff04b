#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""run-fleet.py BUILD_DIR

The fleet part of "observe before enforcing" (issue 39): the Ansible collection over real SSH
against three hosts on this machine, each an OpenSSH sshd (127.0.0.1, a port of its own) in a
private mount and UTS namespace where a scratch root's /run, /etc/modprobe.d and
/usr/lib/modprobe.d are in place as the host's, with its own private dbus-daemon and
fsgated over that root (tools/private-fsgated) and its own journal directory. sshd's SetEnv
gives the sessions the host's bus (DBUS_SYSTEM_BUS_ADDRESS), journal (FSGATE_JOURNAL_DIR),
profiles and this build's fsgatectl (PATH). Key-based root login with keys made here.

  host-a  nothing the profile would block was used
  host-b  udf used (alice, /dev/sr0)
  host-c  udf and hfsplus used by several users (bob, carol, dave)

The "would block" journal entries of host-b and host-c are WRITTEN BY THIS TEST (with
systemd-journal-remote, tests/lib/fsgatetest/journal.py) into that host's journal directory,
standing in for fsgate's hook (fsgate-blocked --observe), which writes them when the kernel
asks for a module; the VM suite tests the hook on a real kernel.

Then: observe cis everywhere (fsgate_profile state=observed, check mode first, then twice:
changed once); the collection's playbook fsgate.fsgate.fleet_report (report.json and
report.txt, checked); enforce with the defaults (host-a enforced, host-b and host-c fail
with the evidence, unchanged); with on_observed_use=skip (skipped, unchanged); with force on
host-b (enforced); state=unobserved on host-c. What each host's fsgatectl says over SSH is
checked after each step. Everything started here is stopped, on failure too. Root only;
exits 77 (skipped) when a program is missing, unless CI=true (then it fails).
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, 'tests', 'lib'))
from fsgatetest import journal  # noqa: E402

ME = 'run-fleet'
PROFILE = 'cis'
OBSERVED_USE = 'org.fsgate.fsgate1.Error.ObservedUse'
HOSTS = ('host-a', 'host-b', 'host-c')
SSHD = '/usr/sbin/sshd'
STEP_TIMEOUT = 120  # one ansible-playbook run


def log(msg):
    print(f'{ME}: {msg}', flush=True)


def skip(why):
    if os.environ.get('CI') == 'true':
        fail(f'a prerequisite is missing, under CI=true: {why}')
    print(f'{ME}: SKIP: {why}', flush=True)
    sys.exit(77)


class Failure(Exception):
    pass


def fail(msg):
    raise Failure(msg)


def check(cond, msg):
    if not cond:
        fail(msg)


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Host:
    def __init__(self, name, work, build, kver_script):
        self.name = name
        self.dir = os.path.join(work, name)
        self.root = os.path.join(self.dir, 'root')
        self.journal = os.path.join(self.dir, 'journal')
        self.port = free_port()
        self.sshd = None
        self.bus = None
        os.makedirs(self.journal)
        os.chmod(self.dir, 0o755)
        out = subprocess.run([kver_script, self.root], check=True, capture_output=True, text=True,
                             timeout=120).stdout
        self.kver = next(line[5:] for line in out.splitlines() if line.startswith('KVER='))

    def start_fsgated(self, build):
        p = subprocess.run([os.path.join(SRC, 'tools', 'private-fsgated'), 'start', f'--dir={self.dir}',
                            f'--root={self.root}', f'--fsgated={build}/service/fsgated',
                            f'--fsgated-arg=--kernel-release={self.kver}', f'--watch={os.getpid()}'],
                           capture_output=True, text=True, timeout=60)
        if p.returncode != 0:
            fail(f'{self.name}: fsgated did not start: {p.stderr}')
        for line in p.stdout.splitlines():
            if line.startswith('export DBUS_SYSTEM_BUS_ADDRESS='):
                self.bus = line.split('=', 1)[1].strip("'")
        check(self.bus, f'{self.name}: private-fsgated printed no bus address')

    def start_sshd(self, build, client_pub, tag):
        hostkey = os.path.join(self.dir, 'ssh_host_ed25519_key')
        subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', hostkey], check=True, timeout=30)
        keys = os.path.join(self.dir, 'authorized_keys')
        shutil.copy(client_pub, keys)
        path = f'{build}/clients:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
        conf = os.path.join(self.dir, 'sshd_config')
        with open(conf, 'w') as f:
            f.write(f'''# SPDX-License-Identifier: LGPL-2.1-or-later
# {self.name} of tests/ansible/run-fleet.py
Port {self.port}
ListenAddress 127.0.0.1
HostKey {hostkey}
PidFile none
AuthorizedKeysFile {keys}
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
LogLevel ERROR
MaxStartups 30:30:60
Subsystem sftp internal-sftp
SetEnv DBUS_SYSTEM_BUS_ADDRESS={self.bus} FSGATE_JOURNAL_DIR={self.journal} FSGATE_PROFILE_DIR={build}/data/profiles PATH={path} FSGATE_FLEET_TEST={tag}
''')
        run = os.path.join(self.root, 'run')
        os.makedirs(os.path.join(run, 'sshd'), exist_ok=True)
        os.chmod(run, 0o755)
        os.chmod(os.path.join(run, 'sshd'), 0o755)
        # The scratch root's directories in place as the host's, in this namespace only.
        inner = ('set -e; hostname "$1"; mount --bind "$2/run" /run; '
                 'mount --bind "$2/etc/modprobe.d" /etc/modprobe.d; '
                 'mount --bind "$2/usr/lib/modprobe.d" /usr/lib/modprobe.d; '
                 f'exec {SSHD} -D -e -f "$3"')
        self.log = open(os.path.join(self.dir, 'sshd.log'), 'w')
        self.sshd = subprocess.Popen(['unshare', '--mount', '--uts', '--propagation', 'private', 'sh', '-c', inner,
                                      'sh', self.name, self.root, conf], stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + 20
        while True:
            if self.sshd.poll() is not None:
                fail(f'{self.name}: sshd exited: {open(self.log.name).read()}')
            try:
                with socket.create_connection(('127.0.0.1', self.port), timeout=1) as s:
                    if s.recv(64).startswith(b'SSH-'):
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                fail(f'{self.name}: sshd does not answer on port {self.port}')
            time.sleep(0.1)

    def stop(self):
        if self.sshd and self.sshd.poll() is None:
            try:
                os.killpg(self.sshd.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.sshd.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.sshd.pid, signal.SIGKILL)
                self.sshd.wait()
        if self.sshd:
            self.log.close()
        subprocess.run([os.path.join(SRC, 'tools', 'private-fsgated'), 'stop', self.dir],
                       capture_output=True, timeout=60)


class Fleet:
    def __init__(self, build, work):
        self.build = build
        self.work = work
        self.hosts = {}
        self.tag = os.path.basename(work)
        self.key = os.path.join(work, 'client_key')
        self.results = os.path.join(work, 'results')
        os.makedirs(self.results)

    def start(self):
        subprocess.run(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-f', self.key], check=True, timeout=30)
        kver_script = os.environ.get('FSGATE_MAKE_SCRATCH_ROOT',
                                     os.path.join(SRC, 'tests', 'kernel', 'make-scratch-root.sh'))
        for name in HOSTS:
            h = Host(name, self.work, self.build, kver_script)
            self.hosts[name] = h
            h.start_fsgated(self.build)
            h.start_sshd(self.build, self.key + '.pub', self.tag)
        home = os.path.join(self.work, 'ansible-home')
        os.makedirs(home)
        with open(os.path.join(self.work, 'ansible.cfg'), 'w') as f:
            f.write(f'''[defaults]
collections_path = {SRC}/ansible/collections
collections_on_ansible_version_mismatch = error
host_key_checking = false
local_tmp = {home}/tmp
remote_tmp = {self.work}/remote-tmp
retry_files_enabled = false
nocows = true
forks = 3
timeout = 20
deprecation_warnings = true

[ssh_connection]
ssh_args = -F /dev/null -o ControlMaster=no -o UserKnownHostsFile=/dev/null -o StrictHostKeyChecking=no -o LogLevel=ERROR -o ConnectTimeout=10
pipelining = true
''')
        with open(os.path.join(self.work, 'inventory'), 'w') as f:
            f.write('[fleet]\n')
            for h in self.hosts.values():
                f.write(f'{h.name} ansible_host=127.0.0.1 ansible_port={h.port}\n')
            f.write(f'''
[fleet:vars]
ansible_user=root
ansible_ssh_private_key_file={self.key}
ansible_python_interpreter=/usr/bin/python3
''')
        self.env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(self.work, 'ansible.cfg'), ANSIBLE_HOME=home,
                        ANSIBLE_NOCOLOR='1', ANSIBLE_COLLECTIONS_PATH=os.path.join(SRC, 'ansible', 'collections'),
                        ANSIBLE_FORCE_COLOR='0', PYTHONDONTWRITEBYTECODE='1')
        # Nothing of the controller's own fsgated: the hosts' are reached over SSH only.
        self.env.pop('DBUS_SYSTEM_BUS_ADDRESS', None)
        self.env.pop('FSGATE_JOURNAL_DIR', None)

    def stop(self):
        for h in self.hosts.values():
            try:
                h.stop()
            except Exception as e:  # keep stopping the others
                print(f'{ME}: stopping {h.name}: {e}', file=sys.stderr)
        # Session processes of the sshds (each SetEnv'd with our tag) that outlived them.
        for pid in os.listdir('/proc'):
            if not pid.isdigit() or int(pid) == os.getpid():
                continue
            try:
                with open(f'/proc/{pid}/environ', 'rb') as f:
                    if f'FSGATE_FLEET_TEST={self.tag}'.encode() in f.read().split(b'\0'):
                        os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass

    # ---- Steps -------------------------------------------------------------------------

    def play(self, book, *args, expect_rc=0):
        path = book if '.' in book and not book.endswith('.yml') else os.path.join(HERE, 'fleet', book)
        log(f'== {os.path.basename(path)} {" ".join(args)}')
        t = time.monotonic()
        p = subprocess.run(['ansible-playbook', '-i', os.path.join(self.work, 'inventory'), path,
                            '-e', f'fleet_results={self.results}', *args], env=self.env, cwd=self.work,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=STEP_TIMEOUT)
        with open(os.path.join(self.work, 'ansible.log'), 'a') as f:
            f.write(f'==== {path} {args} rc={p.returncode}\n{p.stdout}\n{p.stderr}\n')
        if p.returncode != expect_rc:
            fail(f'ansible-playbook {path} {args}: exit {p.returncode}, expected {expect_rc}\n'
                 f'{p.stdout[-6000:]}\n{p.stderr[-3000:]}')
        log(f'   ({time.monotonic() - t:.1f} s)')
        return p

    def result(self, step, host):
        path = os.path.join(self.results, f'{step}-{host}.json')
        check(os.path.exists(path), f'no result of {step} on {host}')
        with open(path) as f:
            return json.load(f)

    def ssh(self, host, *argv, ok=(0,)):
        h = self.hosts[host]
        p = subprocess.run(['ssh', '-F', '/dev/null', '-i', self.key, '-p', str(h.port), '-o', 'BatchMode=yes',
                            '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null',
                            '-o', 'LogLevel=ERROR', 'root@127.0.0.1', '--', *argv],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
        if p.returncode not in ok:
            fail(f'{host}: {" ".join(argv)}: exit {p.returncode}: {p.stdout}{p.stderr}')
        return p.stdout

    def observation(self, host):
        """GetObservation over SSH on host: (profile, modules)."""
        out = self.ssh(host, 'busctl', '--system', '--json=short', 'call', 'org.fsgate.fsgate1',
                       '/org/fsgate/fsgate1', 'org.fsgate.fsgate1.Manager', 'GetObservation')
        data = json.loads(out)['data']
        return data[0], data[2]

    def audit(self, host):
        return json.loads(self.ssh(host, 'fsgatectl', '--json', 'audit', PROFILE, ok=(0, 9)))

    def files(self, host):
        return sorted(os.listdir(os.path.join(self.hosts[host].root, 'etc', 'modprobe.d')))

    def expect_observed(self, host):
        prof, mods = self.observation(host)
        check(prof == PROFILE, f'{host}: GetObservation says {prof!r}, not {PROFILE}')
        check(mods == ['freevxfs', 'hfs', 'hfsplus', 'jffs2', 'udf'], f'{host}: observed modules {mods}')
        a = self.audit(host)
        check(not a['compliant'], f'{host}: compliant while only observed')
        check(self.files(host) == ['fsgate-observe.conf'], f'{host}: files {self.files(host)}')
        # On the host itself, as the admin would look: the namespace's /etc/modprobe.d.
        conf = self.ssh(host, 'cat', '/etc/modprobe.d/fsgate-observe.conf')
        check('# observe-profile cis' in conf, f'{host}: /etc/modprobe.d/fsgate-observe.conf: {conf}')
        check(self.ssh(host, 'hostname').strip() == host, f'{host}: hostname')
        return a

    def expect_enforced(self, host):
        prof, _ = self.observation(host)
        check(prof == '', f'{host}: still observing {prof!r} after enforcing')
        a = self.audit(host)
        check(a['compliant'], f'{host}: not compliant after enforcing: {a["modules"]}')
        check(all(m['denied'] and m['hard'] for m in a['modules'] if 'nothing to load' not in m['why']),
              f'{host}: {a["modules"]}')
        check('fsgate-observe.conf' not in self.files(host), f'{host}: the observation file is still there')
        out = self.ssh(host, 'cat', '/etc/modprobe.d/60-blacklist_fs-udf.conf')
        check('install udf /bin/false' in out, f'{host}: udf is not denied hard: {out}')

    def write_evidence(self):
        """The entries fsgate's hook would write, written by the test (see the docstring)."""
        now = int(time.time() * 1e6)
        sec = 1000000

        def would_block(module, typ, usec, uid, user, device, session, comm='mount', count=1, profile=PROFILE,
                        journal_uid=0):
            return journal.export_entry({
                'MESSAGE': f'Would block autoload of filesystem {typ} ({module}): observing profile {profile}',
                'MESSAGE_ID': journal.WOULD_BLOCK, 'PRIORITY': '5', 'SYSLOG_IDENTIFIER': 'fsgate-blocked',
                '_UID': str(journal_uid), 'FSGATE_TYPE': typ, 'FSGATE_MODULE': module, 'FSGATE_PROFILE': profile,
                'FSGATE_COUNT': str(count), 'FSGATE_DEVICE': device, 'FSGATE_REQUEST_UID': str(uid),
                'FSGATE_REQUEST_PID': '4242', 'FSGATE_REQUEST_COMM': comm, 'FSGATE_USER': user,
                'FSGATE_SESSION': session}, usec)

        # host-a: nothing the hook wrote. A user's forged entry (_UID 1000) and one of another
        # profile must not count.
        journal.write_journal(os.path.join(self.hosts['host-a'].journal, 'fleet.journal'), [
            would_block('udf', 'udf', now + 1 * sec, 1000, 'mallory', '/dev/sr0', '3', journal_uid=1000),
            would_block('bfs', 'bfs', now + 2 * sec, 1000, 'erin', '/dev/sdc1', '3', profile='opensuse'),
        ])
        # host-b: udf, three times, alice at the DVD drive.
        journal.write_journal(os.path.join(self.hosts['host-b'].journal, 'fleet.journal'), [
            would_block('udf', 'udf', now + i * sec, 1000, 'alice', '/dev/sr0', '2') for i in (1, 2, 3)])
        # host-c: udf (bob, then dave last), hfsplus (carol's Mac disk; 4 requests in one entry).
        journal.write_journal(os.path.join(self.hosts['host-c'].journal, 'fleet.journal'), [
            would_block('udf', 'udf', now + 1 * sec, 1001, 'bob', '/dev/sr0', '4'),
            would_block('hfsplus', 'hfsplus', now + 2 * sec, 1002, 'carol', '/dev/sdb2', '5', count=4),
            would_block('udf', 'udf', now + 3 * sec, 1003, 'dave', '/dev/sr1', '6', comm='udisksd'),
        ])

    def run(self):
        t0 = time.monotonic()
        self.start()
        log(f'3 hosts up ({time.monotonic() - t0:.1f} s): ' +
            ', '.join(f'{h.name} on 127.0.0.1:{h.port}' for h in self.hosts.values()))

        # 1. Observe everywhere: check mode predicts and writes nothing; then on; then no change.
        self.play('observe.yml')
        for host in HOSTS:
            dry, first, again = (self.result(s, host) for s in ('observe-check', 'observe', 'observe-again'))
            check(dry['changed'] and [c['change'] for c in dry['changes']] == ['observe'] * 5,
                  f'{host}: check mode: {dry}')
            check(first['changed'] and first['observation']['profile'] == PROFILE, f'{host}: observe: {first}')
            check(not again['changed'] and again['observation'] == first['observation'],
                  f'{host}: observing again changed something: {again}')
            a = self.expect_observed(host)
            check(a['observed']['modules'] == [] and a['observed']['since_usec'] == first['observation']['since_usec'],
                  f'{host}: evidence before any use: {a["observed"]}')

        # 2. The hosts are used (the hook's entries, written by the test).
        self.write_evidence()
        b = self.audit('host-b')['observed']['modules']
        check([(m['module'], m['count'], m['last_user']) for m in b] == [('udf', 3, 'alice')],
              f'host-b: fsgatectl audit: {b}')

        # 3. The fleet report, with the collection's playbook.
        report_dir = os.path.join(self.work, 'report')
        os.makedirs(report_dir)
        self.play('fsgate.fsgate.fleet_report', '-e', f'fsgate_report_dir={report_dir}',
                  '-e', f'fsgate_report_profile={PROFILE}')
        self.check_report(report_dir)

        # 4. Enforce with the defaults: host-a enforced; host-b and host-c fail, unchanged.
        before = {h: self.files(h) for h in ('host-b', 'host-c')}
        self.play('enforce.yml', '-e', 'step=enforce', expect_rc=2)
        a = self.result('enforce', 'host-a')
        check(a['changed'] and a['observation_ended'] and not a.get('failed') and a['observed_use'] == [],
              f'host-a: {a}')
        self.expect_enforced('host-a')
        for host, mods in (('host-b', ['udf']), ('host-c', ['hfsplus', 'udf'])):
            r = self.result('enforce', host)
            check(r.get('failed') and r['dbus_error'] == OBSERVED_USE and not r['changed'] and r['changes'] == [],
                  f'{host}: enforce: {r}')
            check([m['module'] for m in r['observed_use']] == mods, f'{host}: observed_use {r["observed_use"]}')
            check(all(m in r['msg'] for m in mods) and 'force: true' in r['msg'], f'{host}: msg {r["msg"]}')
            check(self.files(host) == before[host], f'{host}: files changed: {self.files(host)}')
            self.expect_observed(host)
        log('   ' + self.result('enforce', 'host-c')['msg'])

        # 5. The same with on_observed_use=skip: nothing fails, host-b and host-c skipped.
        self.play('enforce.yml', '-e', 'step=skip', '-e', 'fleet_on_observed_use=skip')
        a = self.result('skip', 'host-a')
        check(not a['changed'] and not a.get('skipped'), f'host-a: {a}')
        for host in ('host-b', 'host-c'):
            r = self.result('skip', host)
            check(r.get('skipped') and not r['changed'] and not r.get('failed') and
                  'on_observed_use=skip' in r['msg'] and r['observed_use'], f'{host}: skip: {r}')
            check(self.files(host) == before[host], f'{host}: files changed: {self.files(host)}')
            self.expect_observed(host)

        # 6. force on host-b: enforced, its observation ended.
        self.play('enforce.yml', '-e', 'step=force', '-e', 'fleet_force=true', '--limit', 'host-b')
        r = self.result('force', 'host-b')
        check(r['changed'] and r['observation_ended'] and [m['module'] for m in r['observed_use']] == ['udf'] and
              'udf' in [c['module'] for c in r['changes']], f'host-b: force: {r}')
        self.expect_enforced('host-b')
        self.expect_observed('host-c')

        # 7. host-c: the observation ended without enforcing (twice: changed once).
        self.play('enforce.yml', '-e', 'step=unobserve', '-e', 'fleet_state=unobserved', '--limit', 'host-c')
        self.play('enforce.yml', '-e', 'step=unobserve-again', '-e', 'fleet_state=unobserved', '--limit', 'host-c')
        r, again = self.result('unobserve', 'host-c'), self.result('unobserve-again', 'host-c')
        check(r['changed'] and r['observation_ended'] and not again['changed'], f'host-c: unobserve: {r} {again}')
        check(self.observation('host-c')[0] == '', 'host-c: still observed')
        check(self.files('host-c') == [], f'host-c: files: {self.files("host-c")}')
        c = self.audit('host-c')
        check(not c['compliant'], 'host-c: compliant without enforcing')
        # No observation on: the audit shows all the journal holds for cis.
        check([m['module'] for m in c['observed']['modules']] == ['hfsplus', 'udf'] and
              c['observed']['since_usec'] == 0, f'host-c: {c["observed"]}')
        log(f'all fleet tests passed ({time.monotonic() - t0:.1f} s)')

    def check_report(self, report_dir):
        with open(os.path.join(report_dir, 'report.json')) as f:
            report = json.load(f)
        with open(os.path.join(report_dir, 'report.txt')) as f:
            table = f.read()
        log('report.txt:\n' + table)
        rows = {r['host']: r for r in report['hosts']}
        check(report['profile'] == PROFILE and sorted(rows) == list(HOSTS), f'report.json: {report}')
        check(report['summary']['would_break'] == ['host-b', 'host-c'] and report['summary']['clean'] == ['host-a']
              and report['summary']['errors'] == [], f'report.json summary: {report["summary"]}')
        a, b, c = rows['host-a'], rows['host-b'], rows['host-c']
        check(a['status'] == 'clean' and a['observing'] and not a['would_break'] and a['would_break_modules'] == []
              and a['compliant'] is False, f'report host-a: {a}')
        check(b['status'] == 'would-break' and b['would_break_types'] == ['udf'], f'report host-b: {b}')
        (u,) = b['would_break_modules']
        check((u['module'], u['count'], u['last_user'], u['last_uid'], u['last_device'], u['last_session'],
               u['last_command']) == ('udf', 3, 'alice', 1000, '/dev/sr0', '2', 'mount'), f'report host-b: {u}')
        check(c['would_break_types'] == ['hfsplus', 'udf'], f'report host-c: {c}')
        cm = {m['module']: m for m in c['would_break_modules']}
        check(cm['udf']['count'] == 2 and cm['udf']['last_user'] == 'dave' and cm['udf']['last_device'] == '/dev/sr1'
              and cm['hfsplus']['count'] == 4 and cm['hfsplus']['last_user'] == 'carol', f'report host-c: {cm}')
        lines = table.splitlines()
        check(lines[0].split()[:2] == ['HOST', 'PROFILE'], f'report.txt header: {lines[0]}')

        def row(host, module):
            found = [l for l in lines if l.split()[:1] == [host] and module in l.split()]
            check(len(found) == 1, f'report.txt: no single row for {host} {module}:\n{table}')
            return found[0].split()

        check('clean' in row('host-a', '-'), f'report.txt host-a:\n{table}')
        for host, module, count, user in (('host-b', 'udf', '3', 'alice'), ('host-c', 'udf', '2', 'dave'),
                                          ('host-c', 'hfsplus', '4', 'carol')):
            r = row(host, module)
            check('would-break' in r and count in r and user in r, f'report.txt {host} {module}: {r}')
        check('2 of 3 hosts would break if cis were enforced: host-b, host-c' in table, f'report.txt:\n{table}')


def main():
    if len(sys.argv) != 2:
        print(f'usage: {ME} BUILD_DIR', file=sys.stderr)
        return 2
    build = os.path.abspath(sys.argv[1])
    if not os.access(f'{build}/service/fsgated', os.X_OK) or not os.access(f'{build}/clients/fsgatectl', os.X_OK):
        print(f'{ME}: FAIL: fsgated or fsgatectl is not built in {build}', file=sys.stderr)
        return 1
    try:
        if os.geteuid() != 0:
            skip('must run as root (scratch roots, namespaces, sshd)')
        for prog in ('ansible-playbook', 'ssh', 'ssh-keygen', 'unshare', 'dbus-daemon', 'busctl', 'hostname'):
            if not shutil.which(prog):
                skip(f'{prog} is not installed')
        for path in (SSHD, journal.JOURNAL_REMOTE):
            if not os.access(path, os.X_OK):
                skip(f'{path} is not installed (Debian: openssh-server, systemd-journal-remote)')
    except Failure as e:
        print(f'{ME}: FAIL: {e}', file=sys.stderr)
        return 1
    # Nothing started here reads the caller's stdin: ssh would make it non-blocking, and
    # meson's other tests share it (ansible-playbook refuses a non-blocking stdin).
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.environ['FSGATE_PROFILE_DIR'] = f'{build}/data/profiles'  # fsgated inherits it
    work = tempfile.mkdtemp(prefix='fsgate-fleet.', dir='/tmp')
    os.chmod(work, 0o755)
    fleet = Fleet(build, work)
    keep = os.environ.get('FSGATE_FLEET_KEEP') == '1'
    # A meson timeout or ^C: clean up all the same.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rc = 1
    try:
        fleet.run()
        rc = 0
    except Failure as e:
        print(f'{ME}: FAIL: {e}', file=sys.stderr)
        for h in fleet.hosts.values():
            for name in ('sshd.log', 'fsgated.log'):
                p = os.path.join(h.dir, name)
                if os.path.exists(p):
                    with open(p, errors='replace') as f:
                        tail = f.read()[-1500:]
                    print(f'--- {h.name} {name}:\n{tail}', file=sys.stderr)
    except subprocess.TimeoutExpired as e:
        print(f'{ME}: FAIL: timed out: {e}', file=sys.stderr)
    finally:
        fleet.stop()
        if keep:
            print(f'{ME}: kept {work}', file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return rc


if __name__ == '__main__':
    sys.exit(main())
