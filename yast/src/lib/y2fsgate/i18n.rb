# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Yast::I18n where YaST is installed; otherwise (tests on a system without YaST) a
# stand-in with the same methods that returns the untranslated text.

begin
  require "yast"
rescue LoadError
  nil
end

module Y2Fsgate
  if defined?(Yast::I18n)
    I18n = Yast::I18n
  else
    # Untranslated text, same interface as Yast::I18n.
    module I18n
      def textdomain(_domain); end

      def _(str)
        str
      end

      def n_(singular, plural, num)
        num == 1 ? singular : plural
      end
    end
  end
end
