# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Ruby exceptions for fsgated's D-Bus errors. Each carries the D-Bus error name (#name)
# and the service's own message (#message), without ruby-dbus's "; caused by ..." suffix.

module Y2Fsgate
  # Base class: every failure the client reports is one of these.
  class Error < StandardError
    # @return [String] the D-Bus error name, e.g. "org.fsgate.fsgate1.Error.InUse"
    attr_reader :name

    # @param name [String] D-Bus error name
    # @param message [String] the text a person can act on
    def initialize(name, message)
      @name = name
      super(message)
    end

    # @return [String] the last part of the name, e.g. "InUse"
    def short_name
      name.to_s.split(".").last
    end

    # Builds the exception class that belongs to a D-Bus error name.
    # @return [Error]
    def self.for(name, message)
      klass = NAMES.fetch(name) { Error }
      klass.new(name, message)
    end
  end

  PREFIX = "org.fsgate.fsgate1.Error.".freeze

  # Not a plausible module or type name (or text that cannot be sent at all).
  class InvalidNameError < Error; end
  # Unknown flag bits, a negative or too large flags value, an operation offline cannot do.
  class InvalidArgsError < Error; end
  # Neither a filesystem module nor a filesystem type of this kernel.
  class NoSuchFilesystemError < Error; end
  # A kernel module, but not a filesystem.
  class NotAFilesystemError < NoSuchFilesystemError; end
  # The change conflicts with the system's state or configuration (fsgatectl exit status 5).
  class ConflictError < Error; end
  # Compiled into the kernel: cannot be denied.
  class BuiltinError < ConflictError; end
  # Loaded or mounted now: a deny needs FORCE.
  class InUseError < ConflictError; end
  # A file fsgate did not write (or the kernel command line) decides.
  class ForeignConfigError < ConflictError; end
  # A RUNTIME change is hidden by the same file name in /etc.
  class OverriddenError < ConflictError; end
  # The configuration cannot be written.
  class ReadOnlyError < Error; end
  # The kernel refused the module or there is no module file.
  class LoadFailedError < Error; end
  # Someone changed the module's files meanwhile; retry.
  class ConcurrentChangeError < Error; end
  # polkit said no (or wants a password the call did not allow asking for).
  class AccessDeniedError < Error; end
  # Neither the service nor fsgatectl can be used.
  class ServiceUnavailableError < Error; end
  # The service did not answer in time.
  class NoReplyError < Error; end
  # The bus connection broke while a call was in flight: its outcome is unknown.
  class DisconnectedError < Error; end

  DBUS = "org.freedesktop.DBus.Error.".freeze

  NAMES = {
    "#{PREFIX}InvalidName"                   => InvalidNameError,
    "#{PREFIX}NoSuchFilesystem"              => NoSuchFilesystemError,
    "#{PREFIX}NotAFilesystem"                => NotAFilesystemError,
    "#{PREFIX}Builtin"                       => BuiltinError,
    "#{PREFIX}InUse"                         => InUseError,
    "#{PREFIX}ForeignConfig"                 => ForeignConfigError,
    "#{PREFIX}Overridden"                    => OverriddenError,
    "#{PREFIX}ReadOnly"                      => ReadOnlyError,
    "#{PREFIX}LoadFailed"                    => LoadFailedError,
    "#{PREFIX}ConcurrentChange"              => ConcurrentChangeError,
    "#{DBUS}InvalidArgs"                     => InvalidArgsError,
    # A dismissed authentication dialog: nothing was changed, as after a refusal.
    "#{PREFIX}AuthenticationCancelled"       => AccessDeniedError,
    "#{DBUS}AccessDenied"                    => AccessDeniedError,
    "#{DBUS}InteractiveAuthorizationRequired" => AccessDeniedError,
    "#{DBUS}ServiceUnknown"                  => ServiceUnavailableError,
    "#{DBUS}NameHasNoOwner"                  => ServiceUnavailableError,
    "#{DBUS}NoReply"                         => NoReplyError,
    "#{DBUS}Timeout"                         => NoReplyError,
    "#{DBUS}Disconnected"                    => DisconnectedError
  }.freeze
end
