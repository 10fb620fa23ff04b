# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A FAKE of the few YaST pieces the dialog uses, for test/dialog_test.rb on systems
# without YaST (yast2 and libyui are not in Debian). It records what the dialog asks of
# the UI; it shows nothing. It only catches wiring mistakes (a misspelt method, a
# presenter call with wrong arguments); whether the dialog looks and behaves right in
# YaST is for openSUSE to show. Loaded only when the real "yast" cannot be.

module Yast
  FAKE = true

  # A UI term such as VBox(...) or Id(:x).
  class Term
    attr_reader :value, :params

    def initialize(value, *params)
      @value = value
      @params = params
    end

    def ==(other)
      other.is_a?(Term) && value == other.value && params == other.params
    end
    alias_method :eql?, :==

    def hash
      [value, params].hash
    end
  end

  def self.import(_name); end

  module I18n
    def textdomain(_domain); end

    def _(str)
      str
    end
  end

  module Logger
    def log
      @log ||= Object.new.tap { |l| def l.method_missing(*); end }
    end
  end

  module UIShortcuts
    %w[VBox HBox Left Right Bottom HStretch VStretch HSpacing HWeight VWeight Empty MinHeight MinWidth
       Label Id Opt Header Item Cell Table PushButton RichText].each do |name|
      define_method(name) { |*args| Term.new(name.to_sym, *args) }
    end
  end

  # Widget properties by [id, property].
  module UI
    @props = {}

    class << self
      attr_reader :props

      def reset
        @props = {}
      end

      def ChangeWidget(id, property, value)
        @props[[id.params.first, property]] = value
        true
      end

      def QueryWidget(id, property)
        @props[[id.params.first, property]]
      end
    end
  end

  module Label
    def self.CloseButton
      "C&lose"
    end

    def self.HelpButton
      "&Help"
    end
  end

  module Stage
    class << self
      attr_accessor :initial_stage

      def initial
        !!initial_stage
      end
    end
  end

  module Installation
    class << self
      attr_accessor :destdir
    end
    self.destdir = "/mnt"
  end
end
